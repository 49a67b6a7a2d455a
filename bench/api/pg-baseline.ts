import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

/**
 * Baseline: fastify + `pg` doing the same two queries as this service's authenticated
 * GET /api/v1/recipes/{id} on every request: the token by its SHA-256 joined to its user, then the
 * recipe row. No framework on top: what the work costs when nothing else is done.
 */
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify();
app.get<{ Params: { id: string } }>('/recipes/:id', async (request, reply) => {
  const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
  if (!token) return reply.code(401).send({ error: 'unauthorized' });
  const sha = createHash('sha256').update(token).digest('hex');
  const principal = await pool.query(
    `SELECT t.id, t.owner_id, t.scopes, t.expires_at, t.revoked_at, u.email, u.name
       FROM rm.tokens t JOIN rm.users u ON u.id = t.owner_id WHERE t.token_sha256 = $1`,
    [sha],
  );
  const p = principal.rows[0];
  if (!p || p.revoked_at) return reply.code(401).send({ error: 'unauthorized' });
  const recipe = await pool.query('SELECT id, name, description, operations, created_at, updated_at FROM rm.recipes WHERE id = $1 AND owner_id = $2', [
    request.params.id,
    p.owner_id,
  ]);
  if (!recipe.rows[0]) return reply.code(404).send({ error: 'recipe_not_found' });
  return recipe.rows[0];
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
