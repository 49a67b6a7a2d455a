import { randomBytes } from 'node:crypto';

export const idPrefixes = {
  user: 'usr',
  source: 'src',
  destination: 'dst',
  job: 'job',
  recipe: 'rcp',
  workspace: 'ws',
  run: 'run',
  token: 'tok',
  channel: 'nch',
} as const;
export type IdKind = keyof typeof idPrefixes;

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 text of random bytes, without modulo bias (rejection sampling). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += alphabet[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdGenerator = (kind: IdKind) => string;
export const newId: IdGenerator = (kind) => `${idPrefixes[kind]}_${randomBase62(20)}`;

export type Clock = () => Date;
export const systemClock: Clock = () => new Date();
