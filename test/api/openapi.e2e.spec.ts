import { describe, expect } from 'vitest';
import { operationCatalog } from '../../geo/operations/catalog.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';

type Schema = Record<string, any>;

/** Every string schema a request can carry (bodies, parameters, input components), with where it is. */
function requestStrings(doc: Schema): { where: string; schema: Schema }[] {
  const found: { where: string; schema: Schema }[] = [];
  const visit = (s: unknown, where: string) => {
    if (typeof s !== 'object' || s === null) return;
    const schema = s as Schema;
    const types = [schema.type].flat();
    if (types.includes('string') && !schema.enum && schema.const === undefined && schema.format !== 'binary') found.push({ where, schema });
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'discriminator' || key === 'not') continue;
      if (Array.isArray(value))
        value.forEach((v, i) => {
          visit(v, `${where}.${key}[${i}]`);
        });
      else visit(value, `${where}.${key}`);
    }
  };
  for (const [name, schema] of Object.entries(doc.components.schemas as Schema)) if (name.endsWith('Input')) visit(schema, name);
  for (const [path, ops] of Object.entries(doc.paths as Schema)) {
    for (const [method, op] of Object.entries(ops as Schema)) {
      for (const p of op.parameters ?? []) visit(p.schema, `${method} ${path} ${p.in}.${p.name}`);
      visit(op.requestBody?.content?.['application/json']?.schema, `${method} ${path} body`);
    }
  }
  return found;
}

/** Does a string schema admit this value? Only the keywords the document uses on strings. */
function admits(schema: Schema, value: string): boolean {
  const patterns = [schema.pattern, ...(schema.allOf ?? []).map((s: Schema) => s.pattern)].filter(Boolean);
  return patterns.every((p: string) => new RegExp(p, 'u').test(value));
}

const it = e2eTest({ scopes: ['recipes:read', 'recipes:write'] }).extend<{ $file: { doc: Schema } }>({
  doc: [async ({ sut }, use) => use((await sut.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json()), { scope: 'file' }],
});

describe.skipIf(skipWithoutDatabase)('the OpenAPI document is as strict as the server', () => {
  it('describes operations as a union discriminated by type, one member per catalog entry with its parameters', async ({ doc, send: call }) => {
    for (const name of ['OperationInput', 'Operation']) {
      const union = doc.components.schemas[name];
      expect(Object.keys(union.discriminator.mapping)).toEqual(operationCatalog.map((d) => d.id));
      expect(union.oneOf).toHaveLength(operationCatalog.length);
    }
    const buffer = doc.components.schemas.BufferOperationInput;
    expect(buffer.properties.type).toMatchObject({ const: 'buffer' });
    expect(buffer.required).toEqual(['type', 'distance']);
    expect(buffer.additionalProperties).toBe(false);
    // Responses carry the defaults the server filled in.
    expect(doc.components.schemas.BufferOperation.required).toEqual(['type', 'distance', 'units', 'segments']);
    // The Recipe body refers to the union; the server refuses what it refuses.
    expect(doc.paths['/api/v1/recipes'].post.requestBody.content['application/json'].schema.properties.operations.items).toEqual({
      $ref: '#/components/schemas/OperationInput',
    });
    const unknownType = await call('POST', '/api/v1/recipes', { name: 'x', operations: [{ type: 'teleport' }] });
    expect(unknownType.statusCode).toBe(422);
    const extraKey = await call('POST', '/api/v1/recipes', { name: 'x', operations: [{ type: 'make_valid', layer: 'a' }] });
    expect(extraKey.statusCode).toBe(422);
  });

  it('gives every request string a pattern that refuses NUL, and the server refuses NUL in bodies, paths and queries', async ({ doc, send: call }) => {
    const strings = requestStrings(doc);
    expect(strings.length).toBeGreaterThan(20);
    for (const { where, schema } of strings) expect(admits(schema, 'a\u0000b'), where).toBe(false);
    const names = doc.paths['/api/v1/recipes'].post.requestBody.content['application/json'].schema;
    expect(names.propertyNames.pattern).toBe('^[^\\u0000]*$');

    const inBody = await call('POST', '/api/v1/recipes', { name: 'x', operations: [], 'odd\u0000key': 1 });
    expect(inBody.statusCode).toBe(422);
    const inPath = await call('GET', '/api/v1/recipes/rcp_%00');
    expect(inPath.statusCode).toBe(400);
    expect(inPath.json().error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'id' } });
    const inQuery = await call('GET', '/api/v1/recipes?cursor=1.a%00');
    expect(inQuery.statusCode).toBe(400);
  });

  it('says what a cursor looks like, and every cursor the server issues matches it', async ({ doc, send: call }) => {
    const cursor = doc.paths['/api/v1/recipes'].get.parameters.find((p: Schema) => p.name === 'cursor').schema;
    for (let i = 0; i < 3; i++) expect((await call('POST', '/api/v1/recipes', { name: `r${i}`, operations: [] })).statusCode).toBe(201);
    const page = (await call('GET', '/api/v1/recipes?limit=2')).json();
    expect(admits(cursor, page.next_cursor)).toBe(true);
    const next = await call('GET', `/api/v1/recipes?limit=2&cursor=${encodeURIComponent(page.next_cursor)}`);
    expect(next.json().items).toHaveLength(1);
    // Any string of that shape is a cursor the server can page from; anything else is refused.
    expect((await call('GET', '/api/v1/recipes?cursor=1.x')).statusCode).toBe(200);
    expect(admits(cursor, 'garbage')).toBe(false);
    expect((await call('GET', '/api/v1/recipes?cursor=garbage')).statusCode).toBe(400);
  });

  it('refuses blank names in the document as on the server, whatever white space they hold', async ({ doc, send: call }) => {
    const name = doc.paths['/api/v1/recipes'].post.requestBody.content['application/json'].schema.properties.name;
    for (const blank of [' ', '\t\n', '\u00a0', '\ufeff', '\u3000 ']) {
      expect(admits(name, blank), JSON.stringify(blank)).toBe(false);
      expect((await call('POST', '/api/v1/recipes', { name: blank, operations: [] })).statusCode).toBe(422);
    }
    expect(admits(name, ' kept ')).toBe(true);
    const created = await call('POST', '/api/v1/recipes', { name: ' kept ', operations: [] });
    expect(created.json().name).toBe('kept');
  });

  it('answers 405 with Allow for a method a known path does not take', async ({ sut, send: call }) => {
    const res = await sut.app.inject({ method: 'DELETE', url: '/api/v1/formats' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.json().error.code).toBe('method_not_allowed');
    const withId = await call('POST', '/api/v1/recipes/rcp_x', {});
    expect(withId.statusCode).toBe(405);
    expect(withId.headers.allow).toBe('DELETE, GET, HEAD, PUT');
    expect((await sut.app.inject({ method: 'GET', url: '/api/v1/nothing-here' })).statusCode).toBe(404);
    // HEAD, which fastify adds for every GET, is authenticated like the GET.
    expect((await sut.app.inject({ method: 'HEAD', url: '/api/v1/recipes' })).statusCode).toBe(401);
  });
});
