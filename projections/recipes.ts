import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { notFound } from '../domain/errors.js';
import { operationShape, type Operation } from '../domain/operations.js';
import { isoTime } from '../platform/db.js';
import type { ReadPool } from '../platform/read-pool.js';
import { readPage, type Page, type PageRequest } from './pagination.js';
import { ownedRowsProjector } from './projector.js';

export const recipesProjector = ownedRowsProjector({
  name: 'recipes',
  version: 2,
  table: 'recipes',
  columns: sql.fragment`name text NOT NULL, description text NOT NULL DEFAULT '', operations json NOT NULL`,
  created: ['RecipeCreated'],
  updated: ['RecipeUpdated'],
  deleted: ['RecipeDeleted'],
  id: 'recipe_id',
  values: (d) => ({ name: d.name, description: d.description, operations: sql.json(d.operations) }),
});

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
