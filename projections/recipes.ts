import { sql } from 'slonik';
import type { Projector } from './projector.js';

const recipes = (schema: string) => sql.identifier([schema, 'recipes']);

export const recipesProjector: Projector = {
  name: 'recipes',
  version: 2,
  tables: ['recipes'],
  async createTables(tx, schema) {
    await tx.query(sql.unsafe`CREATE TABLE IF NOT EXISTS ${recipes(schema)} (
      id text PRIMARY KEY,
      owner_id text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      operations json NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS recipes_owner ON ${recipes(schema)} (owner_id, created_at DESC, id DESC)`);
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
