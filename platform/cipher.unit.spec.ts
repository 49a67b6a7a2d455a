import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCipher, isSealed, SecretDecryptionError } from './cipher.js';

describe('cipher', () => {
  const sut = createCipher(randomBytes(32));

  it('round-trips a secret and never stores its text', () => {
    const sealed = sut.encrypt('hunter2-ünïcode', 'src_1/password');
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('hunter2');
    expect(sut.decrypt(sealed, 'src_1/password')).toBe('hunter2-ünïcode');
  });

  it('seals the same value differently each time', () => {
    expect(sut.encrypt('x', 'c')).not.toBe(sut.encrypt('x', 'c'));
  });

  it('refuses a ciphertext moved to another field or connection', () => {
    const sealed = sut.encrypt('secret', 'src_1/password');
    expect(() => sut.decrypt(sealed, 'src_2/password')).toThrow(SecretDecryptionError);
  });

  it('refuses another key and tampered text, without echoing the value', () => {
    const sealed = sut.encrypt('secret', 'c');
    const other = createCipher(randomBytes(32));
    expect(() => other.decrypt(sealed, 'c')).toThrow(/cannot be decrypted/);
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => sut.decrypt(tampered, 'c')).toThrow(SecretDecryptionError);
  });
});
