import type { Operation } from '../domain/operations.js';
import { recipeDecider, recipeStream } from '../domain/recipes/recipe.js';
import type { PageRequest } from '../projections/pagination.js';
import { listRecipes as readRecipes, loadRecipe, type RecipeRow } from '../projections/recipes.js';
import { execute } from './commands.js';
import type { Services } from './services.js';

/*
 * Recipes: named, reusable lists of operations, owned by a user. A Job in recipe mode copies a
 * Recipe's operations when it is saved (application/jobs.ts), so editing a Recipe changes no Job.
 */

/** A Recipe as a body has it: operations already checked against the catalogue. */
export interface RecipeBody {
  name: string;
  description: string;
  operations: Operation[];
}

/** The owner's Recipe (another owner's is recipe_not_found). */
export const showRecipe = (services: Services, ownerId: string, id: string): Promise<RecipeRow> => loadRecipe(services.reads, ownerId, id);

/** The owner's Recipes, newest first. */
export const listRecipes = (services: Services, ownerId: string, page: PageRequest) => readRecipes(services.pool, ownerId, page);

export async function createRecipe(services: Services, ownerId: string, body: RecipeBody): Promise<RecipeRow> {
  const recipeId = services.newId('recipe');
  await execute(services, recipeStream(recipeId), recipeDecider, { type: 'CreateRecipe', recipeId, actorId: ownerId, ...body, at: services.clock() });
  return showRecipe(services, ownerId, recipeId);
}

export async function updateRecipe(services: Services, ownerId: string, recipeId: string, body: RecipeBody): Promise<RecipeRow> {
  await execute(services, recipeStream(recipeId), recipeDecider, { type: 'UpdateRecipe', recipeId, actorId: ownerId, ...body, at: services.clock() });
  return showRecipe(services, ownerId, recipeId);
}

export async function deleteRecipe(services: Services, ownerId: string, recipeId: string): Promise<void> {
  await execute(services, recipeStream(recipeId), recipeDecider, { type: 'DeleteRecipe', recipeId, actorId: ownerId, at: services.clock() });
}
