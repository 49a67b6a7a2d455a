import { describe, expect } from 'vitest';
import { registerUser } from '../../application/accounts.js';
import { createToken, login } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';

const it = e2eTest({ scopes: ['recipes:read', 'recipes:write'] });

describe.skipIf(skipWithoutDatabase)('Recipes through /api/v1', () => {
  it('creates, lists, gets, updates and deletes, each write visible to the next read', async ({ send: call }) => {
    const created = await call('POST', '/api/v1/recipes', {
      name: 'Clean parcels',
      operations: [
        { type: 'rename_column', from: 'PARCEL_ID', to: 'parcel_id' },
        { type: 'buffer', distance: 5, units: 'meters' },
      ],
    });
    expect(created.statusCode).toBe(201);
    const recipe = created.json();
    expect(recipe.id).toMatch(/^rcp_/);
    // defaults from the catalog are filled in and stored
    expect(recipe.operations[1]).toEqual({ type: 'buffer', distance: 5, units: 'meters', segments: 8 });

    const list = await call('GET', '/api/v1/recipes');
    expect(list.statusCode).toBe(200);
    expect(list.json().items.map((r: { id: string }) => r.id)).toContain(recipe.id);

    const got = await call('GET', `/api/v1/recipes/${recipe.id}`);
    expect(got.json().name).toBe('Clean parcels');

    const updated = await call('PUT', `/api/v1/recipes/${recipe.id}`, { name: 'Clean parcels v2', operations: [{ type: 'simplify', tolerance: 2 }] });
    expect(updated.statusCode).toBe(200);
    expect((await call('GET', `/api/v1/recipes/${recipe.id}`)).json()).toMatchObject({
      name: 'Clean parcels v2',
      operations: [{ type: 'simplify', tolerance: 2 }],
    });

    expect((await call('DELETE', `/api/v1/recipes/${recipe.id}`)).statusCode).toBe(204);
    const gone = await call('GET', `/api/v1/recipes/${recipe.id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.code).toBe('recipe_not_found');
    expect((await call('DELETE', `/api/v1/recipes/${recipe.id}`)).statusCode).toBe(404);
  });

  it("hides another user's Recipe exactly like a missing one", async ({ sut, send: call }) => {
    const mine = (await call('POST', '/api/v1/recipes', { name: 'private', operations: [] })).json();
    await registerUser(sut.services, { email: 'second@example.com', password: 'another long password' });
    const otherCookie = await login(sut.app, { email: 'second@example.com', password: 'another long password' });
    const other = await createToken(sut.app, otherCookie, ['recipes:read', 'recipes:write']);

    const theirs = await call('GET', `/api/v1/recipes/${mine.id}`, undefined, other);
    const missing = await call('GET', '/api/v1/recipes/rcp_doesnotexist', undefined, other);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error.code).toBe(missing.json().error.code);
    expect((await call('GET', '/api/v1/recipes', undefined, other)).json().items).toEqual([]);
    expect((await call('PUT', `/api/v1/recipes/${mine.id}`, { name: 'x', operations: [] }, other)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/v1/recipes/${mine.id}`, undefined, other)).statusCode).toBe(404);
    expect((await call('GET', `/api/v1/recipes/${mine.id}`)).statusCode).toBe(200);
  });

  it('refuses a write without recipes:write with 403 and names the scope', async ({ sut, cookie, send: call }) => {
    const readOnly = await createToken(sut.app, cookie, ['recipes:read']);
    const res = await call('POST', '/api/v1/recipes', { name: 'x', operations: [] }, readOnly);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatchObject({ code: 'forbidden', details: { missing_scopes: ['recipes:write'] } });
  });

  it('validates operations against the catalog and names the field', async ({ send: call }) => {
    const res = await call('POST', '/api/v1/recipes', {
      name: 'bad',
      operations: [{ type: 'buffer', distance: 'far' }, { type: 'teleport' }, { type: 'simplify', tolerance: 1, layer: 'a' }],
    });
    expect(res.statusCode).toBe(422);
    const { error } = res.json();
    expect(error.code).toBe('validation_error');
    const paths = error.details.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['body.operations.0.distance', 'body.operations.1.type', 'body.operations.2.layer']));
    expect((await call('POST', '/api/v1/recipes', { operations: [] })).json().error.details.issues[0].path).toBe('body.name');
  });

  it('pages through a list with limit and cursor', async ({ send: call }) => {
    for (let i = 0; i < 5; i++) await call('POST', '/api/v1/recipes', { name: `page ${i}`, operations: [] });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call('GET', `/api/v1/recipes?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((r: { id: string }) => r.id));
      cursor = page.next_cursor;
    } while (cursor);
    const all = (await call('GET', '/api/v1/recipes?limit=200')).json().items.map((r: { id: string }) => r.id);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    expect((await call('GET', '/api/v1/recipes?limit=0')).json().error.code).toBe('invalid_parameter');
    expect((await call('GET', '/api/v1/recipes?cursor=garbage')).json().error.code).toBe('invalid_parameter');
  });
});
