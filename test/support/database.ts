import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The admin URL that scripts/test.ts exports; absent when the suite runs without a database. */
export const adminUrl = process.env.SVC_TEST_DATABASE_URL;
export const skipWithoutDatabase = adminUrl ? false : 'SVC_TEST_DATABASE_URL is not set: run the suite with `npm test`, which starts PostgreSQL';

/** A fresh, empty database per test file, so files run in parallel without seeing each other. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!adminUrl) throw new Error(String(skipWithoutDatabase));
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = adminUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  return {
    url,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
