import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Connection secrets at rest: AES-256-GCM with the service key (SVC_SECRET_KEY or the key file in
 * the data folder). What is stored is `v1.<iv>.<tag>.<ciphertext>` in base64url, so events and read
 * models carry only that text. The associated data binds a value to where it belongs (for example
 * `src_…/password`), so a ciphertext copied into another field or connection does not decrypt.
 */
export interface Cipher {
  encrypt(plain: string, context: string): string;
  decrypt(sealed: string, context: string): string;
}

const VERSION = 'v1';

export class SecretDecryptionError extends Error {
  constructor(context: string) {
    super(`A stored secret (${context}) cannot be decrypted: was SVC_SECRET_KEY or the key file changed?`);
    this.name = 'SecretDecryptionError';
  }
}

export function createCipher(key: Buffer): Cipher {
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  return {
    encrypt(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    decrypt(sealed, context) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || body === undefined) throw new SecretDecryptionError(context);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretDecryptionError(context);
      }
    },
  };
}

export const isSealed = (value: unknown): value is string => typeof value === 'string' && /^v1\.[\w-]+\.[\w-]+\.[\w-]*$/.test(value);
