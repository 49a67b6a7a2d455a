import { z } from 'zod';

/**
 * An operation object, as Recipes, Jobs and Workspace pipelines store it: `type` plus the
 * parameters of that type. Which types exist and what their parameters are is the transformation
 * catalog's business (geo/operations); this is only the envelope.
 */
export const operationShape = z
  .object({ type: z.string().min(1) })
  .catchall(z.unknown())
  .meta({ id: 'Operation', description: 'A transform operation: `type` plus the parameters listed for it in GET /api/v1/transformations.' });
export type Operation = z.infer<typeof operationShape>;
