import { randomBytes } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createAppTable } from '../platform/db.js';
import { sha256Hex } from './tokens.js';

/**
 * Browser sessions. They are not a domain resource (nothing else refers to them), so they live
 * in a plain table of the application's own (app.sessions) instead of the event store and a
 * read model; only the SHA-256 of the cookie value is kept.
 */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export async function createSessionTable(pool: DatabasePool): Promise<void> {
  await createAppTable(
    pool,
    sql.fragment`CREATE TABLE IF NOT EXISTS app.sessions (
      id_sha256 text PRIMARY KEY,
      user_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL)`,
  );
}

export async function createSession(pool: DatabasePool, userId: string, now: Date): Promise<string> {
  const value = randomBytes(32).toString('base64url');
  await pool.query(sql.unsafe`INSERT INTO app.sessions (id_sha256, user_id, created_at, expires_at)
    VALUES (${sha256Hex(value)}, ${userId}, ${now.toISOString()}, ${new Date(now.getTime() + SESSION_TTL_MS).toISOString()})`);
  // Opportunistic cleanup keeps the table small without a scheduler.
  await pool.query(sql.unsafe`DELETE FROM app.sessions WHERE expires_at < ${now.toISOString()}`);
  return value;
}

export async function sessionUser(pool: DatabasePool, value: string, now: Date): Promise<string | null> {
  return pool.maybeOneFirst(
    sql.type(z.object({ user_id: z.string() }))`SELECT user_id FROM app.sessions
      WHERE id_sha256 = ${sha256Hex(value)} AND expires_at > ${now.toISOString()}`,
  );
}

export async function deleteSession(pool: DatabasePool, value: string): Promise<void> {
  await pool.query(sql.unsafe`DELETE FROM app.sessions WHERE id_sha256 = ${sha256Hex(value)}`);
}
