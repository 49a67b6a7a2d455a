import { z } from 'zod';

/*
 * Text fields whose OpenAPI pattern must mean exactly what the server checks. `\s` means slightly
 * different sets in JavaScript, Python and Rust (U+FEFF, U+001C–U+001F, U+0085), so the white
 * space String.prototype.trim removes is spelled out; NUL is excluded because the server refuses
 * it everywhere (PostgreSQL cannot store it).
 */
export const WHITE_SPACE = '\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const NOT_BLANK = new RegExp(`^[^\\u0000]*[^${WHITE_SPACE}\\u0000][^\\u0000]*$`);

/** A name: at most `max` characters as sent, not only white space; stored trimmed. */
export const nonBlank = (max: number) => z.string().max(max).regex(NOT_BLANK, 'must not be blank').trim();

/** One token without white space (a host name …), with extra characters excluded. */
export const noWhiteSpace = (exclude = '') => new RegExp(`^[^${WHITE_SPACE}\\u0000${exclude}]+$`);

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text UTF-8 can encode: no unpaired UTF-16 surrogate (String.prototype.isWellFormed, before ES2024's lib). */
export const isWellFormedText = (s: string): boolean => !loneSurrogate.test(s);
