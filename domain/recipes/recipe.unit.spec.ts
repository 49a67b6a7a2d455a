import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { recipeDecider, type RecipeCommand, type RecipeEvent } from './recipe.js';

const at = new Date('2026-01-01T00:00:00Z');
const given = (events: RecipeEvent[]) => events.reduce(recipeDecider.evolve, recipeDecider.initialState());
const when = (events: RecipeEvent[], command: RecipeCommand) => recipeDecider.decide(command, given(events));
const created: RecipeEvent = {
  type: 'RecipeCreated',
  data: { recipe_id: 'rcp_1', owner_id: 'usr_a', name: 'n', description: '', operations: [], at: at.toISOString() },
};

describe('recipe decider', () => {
  it('creates a recipe owned by the actor', () => {
    const events = when([], { type: 'CreateRecipe', recipeId: 'rcp_1', actorId: 'usr_a', name: 'n', description: '', operations: [], at });
    expect(events).toEqual([created]);
  });

  it('updates only for the owner; others get recipe_not_found', () => {
    const update = { type: 'UpdateRecipe' as const, recipeId: 'rcp_1', name: 'm', description: 'd', operations: [{ type: 'centroid' }], at };
    expect(when([created], { ...update, actorId: 'usr_a' })[0]!.type).toBe('RecipeUpdated');
    expect(() => when([created], { ...update, actorId: 'usr_b' })).toThrow(DomainError);
    expect(() => when([], { ...update, actorId: 'usr_a' })).toThrow(/not found/);
  });

  it('deletes once; a deleted recipe is gone for every command', () => {
    const deleted: RecipeEvent = { type: 'RecipeDeleted', data: { recipe_id: 'rcp_1', at: at.toISOString() } };
    expect(when([created], { type: 'DeleteRecipe', recipeId: 'rcp_1', actorId: 'usr_a', at })).toEqual([deleted]);
    expect(() => when([created, deleted], { type: 'DeleteRecipe', recipeId: 'rcp_1', actorId: 'usr_a', at })).toThrow(/not found/);
    expect(() => when([created, deleted], { type: 'CreateRecipe', recipeId: 'rcp_1', actorId: 'usr_a', name: 'n', description: '', operations: [], at })).toThrow(/exists/);
  });
});
