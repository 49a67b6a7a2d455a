import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../test/support/decider.js';
import { DomainError } from '../errors.js';
import { recipeDecider, type RecipeEvent } from './recipe.js';

const at = new Date('2026-01-01T00:00:00Z');
const { decide } = deciderSpec(recipeDecider);
const created: RecipeEvent = {
  type: 'RecipeCreated',
  data: { recipe_id: 'rcp_1', owner_id: 'usr_a', name: 'n', description: '', operations: [], at: at.toISOString() },
};

describe('recipe decider', () => {
  it('creates a recipe owned by the actor', () => {
    const events = decide([], { type: 'CreateRecipe', recipeId: 'rcp_1', actorId: 'usr_a', name: 'n', description: '', operations: [], at });
    expect(events).toEqual([created]);
  });

  it('updates only for the owner; others get recipe_not_found', () => {
    const update = { type: 'UpdateRecipe' as const, recipeId: 'rcp_1', name: 'm', description: 'd', operations: [{ type: 'centroid' }], at };
    expect(decide([created], { ...update, actorId: 'usr_a' })[0]!.type).toBe('RecipeUpdated');
    expect(() => decide([created], { ...update, actorId: 'usr_b' })).toThrow(DomainError);
    expect(() => decide([], { ...update, actorId: 'usr_a' })).toThrow(/not found/);
  });

  it('deletes once; a deleted recipe is gone for every command', () => {
    const deleted: RecipeEvent = { type: 'RecipeDeleted', data: { recipe_id: 'rcp_1', at: at.toISOString() } };
    expect(decide([created], { type: 'DeleteRecipe', recipeId: 'rcp_1', actorId: 'usr_a', at })).toEqual([deleted]);
    expect(() => decide([created, deleted], { type: 'DeleteRecipe', recipeId: 'rcp_1', actorId: 'usr_a', at })).toThrow(/not found/);
    expect(() =>
      decide([created, deleted], { type: 'CreateRecipe', recipeId: 'rcp_1', actorId: 'usr_a', name: 'n', description: '', operations: [], at }),
    ).toThrow(/exists/);
  });
});
