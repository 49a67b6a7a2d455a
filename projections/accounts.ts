import { sql, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { notFound } from '../domain/errors.js';
import { isoTime, isoTimeOrNull } from '../platform/db.js';
import { readPage, type Page, type PageRequest } from './pagination.js';
import type { Projector } from './projector.js';

const t = (schema: string, table: string) => sql.identifier([schema, table]);

/**
 * NOTIFY channel of changes that can end what a cached principal says (application/principal-cache.ts):
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

/** A user as a login checks it (the password hash never leaves the use case). */
const credentialsRow = z.object({ id: z.string(), email: z.string(), name: z.string(), password_hash: z.string() });

/** The user with this (normalized) e-mail, with the password hash to check, if any. */
export async function userByEmail(pool: DatabasePool, email: string) {
  return pool.maybeOne(sql.type(credentialsRow)`SELECT id, email, name, password_hash FROM rm.users WHERE email = ${email}`);
}

const userRow = z.object({ id: z.string(), email: z.string(), name: z.string() });

/** A user by id (a session's), if they exist. */
export async function userById(pool: DatabasePool, id: string) {
  return pool.maybeOne(sql.type(userRow)`SELECT id, email, name FROM rm.users WHERE id = ${id}`);
}

/** A personal access token as its owner sees it: never its value or hash. */
const tokenRow = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()),
  prefix: z.string(),
  created_at: isoTime,
  expires_at: isoTimeOrNull,
  last_used_at: isoTimeOrNull,
  revoked_at: isoTimeOrNull,
});
export type TokenRow = z.infer<typeof tokenRow>;
const tokenColumns = sql.fragment`id, name, scopes, prefix, created_at, expires_at, last_used_at, revoked_at`;

/** The owner's token; any other is token_not_found. */
export async function loadToken(pool: DatabasePool, ownerId: string, id: string): Promise<TokenRow> {
  const row = await pool.maybeOne(sql.type(tokenRow)`SELECT ${tokenColumns} FROM rm.tokens WHERE id = ${id} AND owner_id = ${ownerId}`);
  if (!row) throw notFound('token_not_found', 'Token', id);
  return row;
}

/** The owner's tokens, newest first. */
export async function listTokens(pool: DatabasePool, ownerId: string, page: PageRequest): Promise<Page<TokenRow>> {
  return readPage(pool, tokenRow, sql.fragment`SELECT ${tokenColumns} FROM rm.tokens`, sql.fragment`owner_id = ${ownerId}`, page);
}

/** A token by the SHA-256 of its value, with its owner: what authenticating a request needs (times in epoch ms). */
const tokenOwnerRow = z.object({
  id: z.string(),
  owner_id: z.string(),
  scopes: z.array(z.string()),
  expires_at: z.number().nullable(),
  revoked_at: z.number().nullable(),
  last_used_at: z.number().nullable(),
  email: z.string(),
  name: z.string(),
});

export async function tokenBySha256(pool: DatabasePool, sha256: string) {
  return pool.maybeOne(
    sql.type(tokenOwnerRow)`SELECT t.id, t.owner_id, t.scopes, t.expires_at, t.revoked_at, t.last_used_at, u.email, u.name
      FROM rm.tokens t JOIN rm.users u ON u.id = t.owner_id WHERE t.token_sha256 = ${sha256}`,
  );
}
