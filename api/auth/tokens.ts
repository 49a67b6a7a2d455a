import { createHash } from 'node:crypto';
import { randomBase62 } from '../../platform/ids.js';

/** `svcpat_` + 43 base62 characters (≈256 bits): recognisable by secret scanners, never guessable. */
export const TOKEN_PREFIX = 'svcpat_';
export const newTokenValue = () => `${TOKEN_PREFIX}${randomBase62(43)}`;
export const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');
/** What lists show so a user can tell tokens apart: the prefix and four characters. */
export const displayPrefix = (value: string) => value.slice(0, TOKEN_PREFIX.length + 4);
export const looksLikeToken = (value: string) => /^svcpat_[0-9A-Za-z]{43}$/.test(value);
