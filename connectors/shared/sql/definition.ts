import { z } from 'zod';
import { identifier, upsertTarget, writeMode } from '../fields.js';
import type {
  ChangeCheckBehaviour,
  ChangeCheckDeclaration,
  ConnectorContext,
  DeliverInput,
  DestinationBehaviour,
  DestinationDeclaration,
  ExtractOptions,
  ExtractResult,
  SourceBehaviour,
  SourceDeclaration,
} from '../../types.js';
import type { DeliveryResult } from '../../../domain/transfers.js';
import { cursorCheckNote, cursorCheckUnsupported } from './sql-cursor.js';
import type { WriteMode } from './sql-delivery.js';
import { cursorColumn, cursorIncrementalNote, selectQuery } from './sql.js';

/*
 * The Source and Destination of every SQL type (PostGIS, MySQL, SQL Server, Oracle, BigQuery,
 * Snowflake), defined once: a Source reads a table (`{"table": …}`, the string alone meaning
 * that) or one SELECT, incrementally with a cursor column, and an on-change trigger asks for a
 * newer cursor value; a Destination writes a table with a write mode. A type says only what
 * differs: whether its tables live in a schema (and its default), whether a selector names the
 * geometry column, the words of its fields, whether it upserts, and extra target fields.
 */

type Optional<T> = T | undefined;

/** A SQL Source's selector: a table with the parts a type adds (schema, geometry_column), or one SELECT. */
export type SqlResource<Table extends object = object, Query extends object = object> =
  | ({ table: string; cursor_column?: Optional<string> } & Table)
  | ({ query: string } & Query);

/** A SQL Destination's target: a table with the parts a type adds (schema, spatial_type), in the write modes it has. */
export type SqlTarget<Extra extends object = object, Mode extends WriteMode = Exclude<WriteMode, 'upsert'>> = { table: string; write_mode: Mode } & Extra;

/** The target of a type that upserts. */
export type SqlUpsertTarget<Extra extends object = object> = SqlTarget<Extra, WriteMode> & {
  upsert_keys?: Optional<string[]>;
  delete_marker?: Optional<string>;
};

export interface SqlSourceShape {
  /** The type, as error messages name it. */
  type: string;
  /** The schema of a table: its default, or (optional) what leaving it out means. Absent: tables are named alone. */
  schema?: { default: string } | { optional: string };
  /** What the table field names; 'Table or view' when left out. */
  table?: string;
  /**
   * The geometry_column field, for types whose tables may hold several: what it says, and
   * whether a query takes it too (then it follows cursor_column, as those types published it).
   */
  geometryColumn?: { what: string; onQuery?: boolean };
  /** What the query field says; 'One SELECT statement' when left out. */
  query?: string;
}

/** The `source_resource` schema of a SQL type. */
export function sqlResource(shape: SqlSourceShape) {
  const schema = shape.schema && {
    schema: 'default' in shape.schema ? identifier('Schema').default(shape.schema.default) : identifier(shape.schema.optional).optional(),
  };
  const geometry = shape.geometryColumn && { geometry_column: identifier(shape.geometryColumn.what).optional() };
  const onQuery = shape.geometryColumn?.onQuery ? geometry : undefined;
  return z.union([
    z.strictObject({
      ...schema,
      table: identifier(shape.table ?? 'Table or view'),
      ...(onQuery ? {} : geometry),
      cursor_column: cursorColumn(),
      ...onQuery,
    }),
    onQuery ? selectQuery(shape.query).extend(onQuery) : selectQuery(shape.query),
  ]);
}

/** A SQL type's Source as the registry knows it before loading the type (connectors/<type>/declaration.ts). */
export function sqlSourceDeclaration<R extends SqlResource>(shape: SqlSourceShape): SourceDeclaration<R> & { changeCheck: ChangeCheckDeclaration<R> } {
  return {
    // The selector's fields are the ones R declares (a schema with a default is always there).
    resource: sqlResource(shape) as unknown as z.ZodType<R>,
    shorthand: 'table',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: cursorIncrementalNote,
    changeCheck: { note: cursorCheckNote, unsupported: cursorCheckUnsupported(shape.type) },
  };
}

export interface SqlSourceBehaviour<R, C> {
  extract(config: C, resource: R, ctx: ConnectorContext, options: ExtractOptions): Promise<ExtractResult>;
  /** Whether the cursor column holds a value above `cursor` (the last Run's). */
  changed(config: C, resource: R, ctx: ConnectorContext, cursor: unknown): Promise<boolean>;
}

export interface SqlTargetShape {
  /** The default schema of a type whose targets name one (it must exist); absent: tables are named alone. */
  schema?: string;
  /** What the table field says; 'Table (created when missing)' when left out. */
  table?: string;
  /** Whether the type upserts (write_mode upsert with upsert_keys and delete_marker). */
  upsert: boolean;
  /** Fields after write_mode (a new table's spatial type). */
  extra?: z.ZodRawShape;
}

/** The `destination_target` schema of a SQL type. */
export function sqlTarget(shape: SqlTargetShape) {
  const fields = {
    ...(shape.schema === undefined ? {} : { schema: identifier('Schema (must exist)').default(shape.schema) }),
    table: identifier(shape.table ?? 'Table (created when missing)'),
  };
  return shape.upsert ? upsertTarget({ ...fields, ...shape.extra }) : z.strictObject({ ...fields, write_mode: writeMode, ...shape.extra });
}

/** A SQL type's Destination as the registry knows it before loading the type. */
export function sqlDestinationDeclaration<T extends SqlTarget<object, WriteMode>>(shape: SqlTargetShape): DestinationDeclaration<T> {
  // The target's fields are the ones T declares.
  return { target: sqlTarget(shape) as unknown as z.ZodType<T>, deliverable: true };
}

type Deliver<T, C> = (config: C, target: T, input: DeliverInput, ctx: ConnectorContext) => Promise<DeliveryResult>;

/**
 * What a SQL type does, Source and Destination at once (connectors/<type>/index.ts, loaded on
 * first use): its extract, the cursor check of on-change triggers, and its delivery.
 */
export function sqlBehaviour<R extends SqlResource, T extends SqlTarget<object, WriteMode>, C extends object>(
  behaviour: SqlSourceBehaviour<R, C> & { deliver: Deliver<T, C> },
): { source: SourceBehaviour<R, C> & { changeCheck: ChangeCheckBehaviour<R, C> }; destination: DestinationBehaviour<T, C> } {
  return {
    source: {
      extract: (config, resource, ctx, options) => behaviour.extract(config, resource, ctx, options),
      changeCheck: { changed: (config, resource, ctx, sync) => behaviour.changed(config, resource, ctx, sync?.cursor) },
    },
    destination: { deliver: (config, target, input, ctx) => behaviour.deliver(config, target, input, ctx) },
  };
}
