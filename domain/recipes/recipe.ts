import { DomainError, notFound } from '../errors.js';
import { unreachable, type Decider } from '../decider.js';
import type { Operation } from '../operations.js';

export const recipeStream = (id: string) => `recipe-${id}`;

export type RecipeEvent =
  | { type: 'RecipeCreated'; data: { recipe_id: string; owner_id: string; name: string; description: string; operations: Operation[]; at: string } }
  | { type: 'RecipeUpdated'; data: { recipe_id: string; name: string; description: string; operations: Operation[]; at: string } }
  | { type: 'RecipeDeleted'; data: { recipe_id: string; at: string } };

export type RecipeCommand =
  | { type: 'CreateRecipe'; recipeId: string; actorId: string; name: string; description: string; operations: Operation[]; at: Date }
  | { type: 'UpdateRecipe'; recipeId: string; actorId: string; name: string; description: string; operations: Operation[]; at: Date }
  | { type: 'DeleteRecipe'; recipeId: string; actorId: string; at: Date };

export type RecipeState = { status: 'absent' } | { status: 'active' | 'deleted'; ownerId: string; name: string; description: string; operations: Operation[] };

const missing = (id: string) => notFound('recipe_not_found', 'Recipe', id);

/** Another user's Recipe is answered exactly like a missing one. */
function ownedActive(state: RecipeState, actorId: string, id: string) {
  if (state.status !== 'active' || state.ownerId !== actorId) throw missing(id);
  return state;
}

export const recipeDecider: Decider<RecipeCommand, RecipeState, RecipeEvent> = {
  initialState: () => ({ status: 'absent' }),

  decide(command, state) {
    switch (command.type) {
      case 'CreateRecipe':
        if (state.status !== 'absent') throw new DomainError('conflict', `Recipe ${command.recipeId} already exists`);
        return [
          {
            type: 'RecipeCreated',
            data: {
              recipe_id: command.recipeId,
              owner_id: command.actorId,
              name: command.name,
              description: command.description,
              operations: command.operations,
              at: command.at.toISOString(),
            },
          },
        ];
      case 'UpdateRecipe':
        ownedActive(state, command.actorId, command.recipeId);
        return [
          {
            type: 'RecipeUpdated',
            data: {
              recipe_id: command.recipeId,
              name: command.name,
              description: command.description,
              operations: command.operations,
              at: command.at.toISOString(),
            },
          },
        ];
      case 'DeleteRecipe':
        ownedActive(state, command.actorId, command.recipeId);
        return [{ type: 'RecipeDeleted', data: { recipe_id: command.recipeId, at: command.at.toISOString() } }];
      default:
        return unreachable(command);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'RecipeCreated':
        return {
          status: 'active',
          ownerId: event.data.owner_id,
          name: event.data.name,
          description: event.data.description,
          operations: event.data.operations,
        };
      case 'RecipeUpdated':
        if (state.status === 'absent') return state;
        return { ...state, name: event.data.name, description: event.data.description, operations: event.data.operations };
      case 'RecipeDeleted':
        if (state.status === 'absent') return state;
        return { ...state, status: 'deleted' };
      default:
        return unreachable(event);
    }
  },
};
