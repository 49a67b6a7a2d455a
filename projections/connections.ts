import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { kindNoun, notFoundCode, type ConnectionKind } from '../domain/connections/kinds.js';
import { notFound } from '../domain/errors.js';
import { isoTime } from '../platform/db.js';
import { readPage, type Page, type PageRequest } from './pagination.js';
import { ownedRowsProjector } from './projector.js';

/**
 * Sources and Destinations, one table with a kind column. Only public fields and the names of
 * the secret fields that hold a value are projected: sealed secrets stay in the event store.
 */
export const connectionsProjector = ownedRowsProjector({
  name: 'connections',
  version: 1,
  table: 'connections',
  columns: sql.fragment`kind text NOT NULL, name text NOT NULL, type text NOT NULL, configuration jsonb NOT NULL, secret_fields text[] NOT NULL`,
  indexBy: 'kind',
  created: ['SourceCreated', 'DestinationCreated'],
  updated: ['SourceUpdated', 'DestinationUpdated'],
  deleted: ['SourceDeleted', 'DestinationDeleted'],
  id: 'id',
  createdOnly: (d) => ({ kind: d.kind }),
  values: (d) => ({ name: d.name, type: d.type, configuration: sql.jsonb(d.configuration), secret_fields: sql.array(d.secret_fields, 'text') }),
});

/** A saved connection as the use cases read it: public fields and the names of the secrets it holds, never their values. */
const connectionRow = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  configuration: z.record(z.string(), z.unknown()),
  secret_fields: z.array(z.string()),
  created_at: isoTime,
  updated_at: isoTime,
});
export type ConnectionRow = z.infer<typeof connectionRow>;
const columns = sql.fragment`id, name, type, configuration, secret_fields, created_at, updated_at`;

/** The owner's Source or Destination; any other is source_not_found or destination_not_found. */
export async function loadConnection(pool: DatabasePool, kind: ConnectionKind, ownerId: string, id: string): Promise<ConnectionRow> {
  const row = await pool.maybeOne(sql.type(connectionRow)`SELECT ${columns} FROM rm.connections WHERE id = ${id} AND owner_id = ${ownerId} AND kind = ${kind}`);
  if (!row) throw notFound(notFoundCode(kind), kindNoun(kind), id);
  return row;
}

/** The owner's Sources or Destinations, newest first. */
export async function listConnections(pool: DatabasePool, kind: ConnectionKind, ownerId: string, page: PageRequest): Promise<Page<ConnectionRow>> {
  return readPage(pool, connectionRow, sql.fragment`SELECT ${columns} FROM rm.connections`, sql.fragment`owner_id = ${ownerId} AND kind = ${kind}`, page);
}

/** The type of the owner's Source or Destination, or null when the owner has none by that id. */
export async function connectionType(pool: DatabasePool, kind: ConnectionKind, ownerId: string, id: string): Promise<string | null> {
  return pool.maybeOneFirst(
    sql.type(z.object({ type: z.string() }))`SELECT type FROM rm.connections WHERE id = ${id} AND owner_id = ${ownerId} AND kind = ${kind}`,
  );
}
