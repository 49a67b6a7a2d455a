import { sql } from 'slonik';
import type { Projector } from './projector.js';

const connections = (schema: string) => sql.identifier([schema, 'connections']);

/**
 * Sources and Destinations, one table with a kind column. Only public fields and the names of
 * the secret fields that hold a value are projected: sealed secrets stay in the event store.
 */
export const connectionsProjector: Projector = {
  name: 'connections',
  version: 1,
  tables: ['connections'],
  async createTables(tx, schema) {
    await tx.query(sql.unsafe`CREATE TABLE IF NOT EXISTS ${connections(schema)} (
      id text PRIMARY KEY,
      kind text NOT NULL,
      owner_id text NOT NULL,
      name text NOT NULL,
      type text NOT NULL,
      configuration jsonb NOT NULL,
      secret_fields text[] NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS connections_owner ON ${connections(schema)} (owner_id, kind, created_at DESC, id DESC)`);
  },
  async apply(tx, schema, event) {
    const d = event.data as Record<string, any>;
    switch (event.type) {
      case 'SourceCreated':
      case 'DestinationCreated':
        await tx.query(sql.unsafe`INSERT INTO ${connections(schema)} (id, kind, owner_id, name, type, configuration, secret_fields, created_at, updated_at)
          VALUES (${d.id}, ${d.kind}, ${d.owner_id}, ${d.name}, ${d.type}, ${sql.jsonb(d.configuration)}, ${sql.array(d.secret_fields, 'text')}, ${d.at}, ${d.at})
          ON CONFLICT (id) DO NOTHING`);
        break;
      case 'SourceUpdated':
      case 'DestinationUpdated':
        await tx.query(sql.unsafe`UPDATE ${connections(schema)} SET name = ${d.name}, type = ${d.type}, configuration = ${sql.jsonb(d.configuration)},
          secret_fields = ${sql.array(d.secret_fields, 'text')}, updated_at = ${d.at} WHERE id = ${d.id}`);
        break;
      case 'SourceDeleted':
      case 'DestinationDeleted':
        await tx.query(sql.unsafe`DELETE FROM ${connections(schema)} WHERE id = ${d.id}`);
        break;
      default:
        break;
    }
  },
};
