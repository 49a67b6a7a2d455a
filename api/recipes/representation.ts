import { z } from 'zod';
import { operationShape } from '../../domain/operations.js';
import { timestamp } from '../schemas.js';

/* A Recipe as the API shows it: the read model's row as it is. */
export const recipeSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    operations: z.array(operationShape),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Recipe' });
