import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ConnectorContext, ExtractOptions } from '../../types.js';
import { sqlBehaviour, sqlDestinationDeclaration, sqlResource, sqlSourceDeclaration, sqlTarget, type SqlResource } from './definition.js';

interface Shape {
  anyOf?: Shape[];
  properties?: object;
}
const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Shape;
/** The field names of each alternative, in order. */
const fields = (schema: z.ZodType) => (json(schema).anyOf ?? [json(schema)]).map((alternative) => Object.keys(alternative.properties ?? {}));

describe('the SQL Source and Destination definition', () => {
  it('builds a selector of a table (with the parts a type has) or one SELECT', () => {
    const postgis = sqlResource({ type: 'postgis', schema: { default: 'public' } });
    expect(fields(postgis)).toEqual([['schema', 'table', 'cursor_column'], ['query']]);
    expect(postgis.parse({ table: 'parcels' })).toEqual({ schema: 'public', table: 'parcels' });
    expect(postgis.safeParse({ table: 'parcels', other: 1 }).success).toBe(false);

    const oracle = sqlResource({ type: 'oracle', schema: { optional: 'Owner' }, geometryColumn: { what: 'SDO_GEOMETRY column' } });
    expect(fields(oracle)).toEqual([['schema', 'table', 'geometry_column', 'cursor_column'], ['query']]);
    expect(oracle.parse({ table: 'PARCELS' })).toEqual({ table: 'PARCELS' });

    // The warehouses take the geometry column on a query too, after cursor_column on a table.
    const warehouse = sqlResource({ type: 'bigquery', geometryColumn: { what: 'GEOGRAPHY column', onQuery: true }, query: 'One GoogleSQL SELECT' });
    expect(fields(warehouse)).toEqual([
      ['table', 'cursor_column', 'geometry_column'],
      ['query', 'geometry_column'],
    ]);
    expect(warehouse.parse({ query: 'SELECT 1', geometry_column: 'g' })).toEqual({ query: 'SELECT 1', geometry_column: 'g' });
  });

  it('builds a target with write modes; only a type that upserts takes upsert, and says so otherwise', () => {
    const upserting = sqlTarget({ schema: 'public', upsert: true });
    expect(fields(upserting)).toEqual([['schema', 'table', 'write_mode', 'upsert_keys', 'delete_marker']]);
    expect(upserting.parse({ table: 't' })).toEqual({ schema: 'public', table: 't', write_mode: 'replace' });
    expect(upserting.safeParse({ table: 't', write_mode: 'upsert' }).error?.issues[0]?.message).toMatch(/needs upsert_keys/);

    const plain = sqlTarget({ upsert: false, extra: { spatial_type: z.enum(['geometry', 'geography']).default('geometry') } });
    expect(fields(plain)).toEqual([['table', 'write_mode', 'spatial_type']]);
    expect(plain.safeParse({ table: 't', write_mode: 'upsert' }).error?.issues[0]?.message).toMatch(/upsert is not available for this Destination type/);
  });

  it('reads a table by its shorthand, incrementally, and checks changes by the cursor column only', async () => {
    const seen: unknown[] = [];
    const declared = sqlSourceDeclaration<SqlResource>({ type: 'mysql' });
    const { source, destination } = sqlBehaviour<SqlResource, { table: string; write_mode: 'append' }, { host: string }>({
      extract: async () => ({ file: 'f', filename: 'f', bytes: 0, features: 0 }),
      changed: async (_config, _resource, _ctx, cursor) => {
        seen.push(cursor);
        return true;
      },
      deliver: async (_c, target) => ({ target: { table: target.table }, rows_written: 1 }),
    });
    expect(declared).toMatchObject({ shorthand: 'table', resourceRequired: true, importable: true, incremental: true });
    expect(declared.changeCheck.unsupported!({ query: 'SELECT 1' })).toMatch(/^on-change for a mysql Source needs a table with cursor_column/);
    expect(declared.changeCheck.unsupported!({ table: 't' })).toMatch(/needs cursor_column/);
    expect(declared.changeCheck.unsupported!({ table: 't', cursor_column: 'id' })).toBeNull();
    const ctx = {} as ConnectorContext;
    await source.changeCheck.changed({ host: 'h' }, { table: 't', cursor_column: 'id' }, ctx, { cursor: { column: 'id', value: '7' } });
    await source.changeCheck.changed({ host: 'h' }, { table: 't', cursor_column: 'id' }, ctx, null);
    expect(seen).toEqual([{ column: 'id', value: '7' }, undefined]);
    expect(await source.extract({ host: 'h' }, { table: 't' }, ctx, {} as ExtractOptions)).toMatchObject({ file: 'f' });

    expect(sqlDestinationDeclaration({ upsert: false }).deliverable).toBe(true);
    expect(await destination.deliver({ host: 'h' }, { table: 't', write_mode: 'append' }, {} as never, ctx)).toEqual({
      target: { table: 't' },
      rows_written: 1,
    });
  });
});
