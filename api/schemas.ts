import { z } from 'zod';
import { validateOperations } from '../geo/operations/catalog.js';
import { operationShape } from '../domain/operations.js';

export const timestamp = z.string().describe('ISO 8601 UTC');

/**
 * The characters String.prototype.trim removes, spelled out: `\s` means slightly different sets
 * in JavaScript, Python and Rust, and the OpenAPI pattern must mean the same to every client.
 */
const TRIMMED = '\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const NOT_BLANK = new RegExp(`^[^\\u0000]*[^${TRIMMED}\\u0000][^\\u0000]*$`);

/** A name: at most `max` characters as sent, not only white space; stored trimmed. */
export const nonBlank = (max: number) => z.string().max(max).regex(NOT_BLANK, 'must not be blank').trim();
export const idParam = z.object({ id: z.string().min(1).max(100) });

/**
 * An ordered list of operations, checked against the transformation catalog: an unknown type or
 * a bad parameter is a 422 naming the exact field (operations.1.distance).
 */
export const operationList = z.array(operationShape).max(200).transform((ops, ctx) => {
  const result = validateOperations(ops);
  if (result.ok) return result.operations;
  for (const issue of result.issues) ctx.addIssue({ code: 'custom', path: issue.path.slice(1), message: issue.message });
  return z.NEVER;
});
