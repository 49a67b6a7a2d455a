import { sql, type DatabaseTransactionConnection } from 'slonik';
import type { Projector } from './projector.js';

const t = (schema: string, table: string) => sql.identifier([schema, table]);

/**
 * NOTIFY channel of changes that can end what a cached principal says (api/auth/principal-cache):
 * sent inside the projection's transaction, so listeners hear it exactly when the row commits.
 */
export const ACCOUNTS_CHANNEL = 'svc_accounts';
export type AccountsChange = { token_id: string } | { user_id: string };

async function announce(tx: DatabaseTransactionConnection, change: AccountsChange) {
  await tx.query(sql.unsafe`SELECT pg_notify(${ACCOUNTS_CHANNEL}, ${JSON.stringify(change)})`);
}

/** Users and their personal access tokens (hashes only), as the authentication path reads them. */
export const accountsProjector: Projector = {
  name: 'accounts',
  version: 1,
  tables: ['users', 'tokens'],
  async createTables(tx, schema) {
    await tx.query(sql.unsafe`CREATE TABLE IF NOT EXISTS ${t(schema, 'users')} (
      id text PRIMARY KEY,
      email text NOT NULL UNIQUE,
      name text NOT NULL,
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL)`);
    await tx.query(sql.unsafe`CREATE TABLE IF NOT EXISTS ${t(schema, 'tokens')} (
      id text PRIMARY KEY,
      owner_id text NOT NULL,
      name text NOT NULL,
      scopes text[] NOT NULL,
      token_sha256 text NOT NULL UNIQUE,
      prefix text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS tokens_owner ON ${t(schema, 'tokens')} (owner_id, created_at DESC)`);
  },
  async apply(tx, schema, event) {
    const d = event.data as Record<string, any>;
    switch (event.type) {
      case 'UserRegistered':
        await tx.query(sql.unsafe`INSERT INTO ${t(schema, 'users')} (id, email, name, password_hash, created_at, updated_at)
          VALUES (${d.user_id}, ${d.email}, ${d.name}, ${d.password_hash}, ${d.at}, ${d.at})`);
        break;
      case 'UserPasswordChanged':
        await tx.query(sql.unsafe`UPDATE ${t(schema, 'users')} SET password_hash = ${d.password_hash}, updated_at = ${d.at} WHERE id = ${d.user_id}`);
        await announce(tx, { user_id: d.user_id });
        break;
      case 'TokenCreated':
        await tx.query(sql.unsafe`INSERT INTO ${t(schema, 'tokens')} (id, owner_id, name, scopes, token_sha256, prefix, created_at, expires_at)
          VALUES (${d.token_id}, ${d.owner_id}, ${d.name}, ${sql.array(d.scopes, 'text')}, ${d.token_sha256}, ${d.prefix}, ${d.at}, ${d.expires_at})`);
        break;
      case 'TokenRevoked':
        await tx.query(sql.unsafe`UPDATE ${t(schema, 'tokens')} SET revoked_at = ${d.at} WHERE id = ${d.token_id}`);
        await announce(tx, { token_id: d.token_id });
        break;
      case 'TokenUsed':
        await tx.query(sql.unsafe`UPDATE ${t(schema, 'tokens')} SET last_used_at = ${d.at} WHERE id = ${d.token_id}`);
        break;
      default:
        break;
    }
  },
};
