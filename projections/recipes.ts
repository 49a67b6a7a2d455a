import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { notFound } from '../domain/errors.js';
import { operationShape, type Operation } from '../domain/operations.js';
import { isoTime } from '../platform/db.js';
import type { ReadPool } from '../platform/read-pool.js';
import { readPage, type Page, type PageRequest } from './pagination.js';
import { createOwnedTable, type Projector } from './projector.js';

const recipes = (schema: string) => sql.identifier([schema, 'recipes']);

export const recipesProjector: Projector = {
  name: 'recipes',
  version: 2,
  tables: ['recipes'],
  async createTables(tx, schema) {
    await createOwnedTable(tx, schema, 'recipes', sql.fragment`name text NOT NULL, description text NOT NULL DEFAULT '', operations json NOT NULL`);
  },
  async apply(tx, schema, event) {
    const d = event.data as Record<string, any>;
    switch (event.type) {
      case 'RecipeCreated':
        await tx.query(sql.unsafe`INSERT INTO ${recipes(schema)} (id, owner_id, name, description, operations, created_at, updated_at)
          VALUES (${d.recipe_id}, ${d.owner_id}, ${d.name}, ${d.description}, ${sql.json(d.operations)}, ${d.at}, ${d.at})`);
        break;
      case 'RecipeUpdated':
        await tx.query(sql.unsafe`UPDATE ${recipes(schema)} SET name = ${d.name}, description = ${d.description},
          operations = ${sql.json(d.operations)}, updated_at = ${d.at} WHERE id = ${d.recipe_id}`);
        break;
      case 'RecipeDeleted':
        await tx.query(sql.unsafe`DELETE FROM ${recipes(schema)} WHERE id = ${d.recipe_id}`);
        break;
      default:
        break;
    }
  },
};

/** A Recipe as the use cases read it (and as the API shows it). */
const recipeRow = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  operations: z.array(operationShape),
  created_at: isoTime,
  updated_at: isoTime,
});
export type RecipeRow = z.infer<typeof recipeRow>;

/** The owner's Recipe (a hot read by id: on plain pg, platform/read-pool.ts); any other is recipe_not_found. */
export async function loadRecipe(reads: ReadPool, ownerId: string, id: string): Promise<RecipeRow> {
  const row = await reads.maybeOne(
    recipeRow,
    'SELECT id, name, description, operations, created_at, updated_at FROM rm.recipes WHERE id = $1 AND owner_id = $2',
    [id, ownerId],
  );
  if (!row) throw notFound('recipe_not_found', 'Recipe', id);
  return row;
}

/** The owner's Recipes, newest first. */
export async function listRecipes(pool: DatabasePool, ownerId: string, page: PageRequest): Promise<Page<RecipeRow>> {
  return readPage(
    pool,
    recipeRow,
    sql.fragment`SELECT id, name, description, operations, created_at, updated_at FROM rm.recipes`,
    sql.fragment`owner_id = ${ownerId}`,
    page,
  );
}

/** The operations of the owner's Recipe (a Job copies them); any other Recipe is recipe_not_found. */
export async function recipeOperations(pool: DatabasePool, ownerId: string, id: string): Promise<Operation[]> {
  const operations = await pool.maybeOneFirst(
    sql.type(
      z.object({ operations: z.array(z.record(z.string(), z.unknown())) }),
    )`SELECT operations FROM rm.recipes WHERE id = ${id} AND owner_id = ${ownerId}`,
  );
  if (operations === null) throw notFound('recipe_not_found', 'Recipe', id);
  return operations as Operation[];
}
