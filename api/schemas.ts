import { z } from 'zod';
import { validateOperations } from '../geo/operations/catalog.js';
import { operationShape } from '../domain/operations.js';

export const timestamp = z.string().describe('ISO 8601 UTC');

export { nonBlank } from '../platform/text.js';
export const idParam = z.object({ id: z.string().min(1).max(100) });

/**
 * An ordered list of operations, checked against the transformation catalog: an unknown type or
 * a bad parameter is a 422 naming the exact field (operations.1.distance).
 */
export const operationList = z
  .array(operationShape)
  .max(200)
  .transform((ops, ctx) => {
    const result = validateOperations(ops);
    if (result.ok) return result.operations;
    for (const issue of result.issues) ctx.addIssue({ code: 'custom', path: issue.path.slice(1), message: issue.message });
    return z.NEVER;
  });
