import { z } from 'zod';
import { timestamp } from '../schemas.js';

/* A personal access token as its owner sees it: the read model's row as it is, never the value or its hash. */
export const tokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.string()),
    prefix: z.string().describe('First characters of the value, to tell tokens apart'),
    created_at: timestamp,
    expires_at: timestamp.nullable(),
    last_used_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
  })
  .meta({ id: 'Token' });

/** The answer to a creation: the only time the value is shown. */
export const createdTokenSchema = tokenSchema.extend({ token: z.string().describe('The value: shown only in this response') }).meta({ id: 'CreatedToken' });
