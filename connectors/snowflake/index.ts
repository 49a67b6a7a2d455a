import { ConnectorError } from '../../domain/transfers.js';
import { sqlBehaviour } from '../shared/sql/definition.js';
import { describeServer, testConnection, withSession } from './client.js';
import { deliverSnowflake, INTERNAL_PREFIX } from './deliver.js';
import { extractSnowflake, snowflakeChanged } from './extract.js';
import { snowflakeDeclaration } from './declaration.js';
import { defineConnector } from '../types.js';

export const snowflake = defineConnector(snowflakeDeclaration, {
  test: (c, ctx) =>
    testConnection(c, ctx, async (s) => {
      const row = (await s.query('SELECT CURRENT_VERSION() AS V, CURRENT_ROLE() AS R, CURRENT_WAREHOUSE() AS W'))[0] ?? {};
      return {
        message: `Connected to ${describeServer(c)} (Snowflake ${String(row.V ?? 'unknown')}) as ${c.username}, role ${String(row.R ?? 'default')}, warehouse ${String(row.W ?? 'none')}`,
      };
    }),
  async discover(c, query, ctx) {
    return withSession(c, ctx, async (s) => {
      const schemas = (await s.query("SELECT SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA WHERE SCHEMA_NAME <> 'INFORMATION_SCHEMA' ORDER BY SCHEMA_NAME")).map(
        (r) => String(r.SCHEMA_NAME),
      );
      const base = { host: c.access_url ? new URL(c.access_url).host : `${c.account}.snowflakecomputing.com`, database: c.database, schemas };
      if (query.schema === undefined) return base;
      if (!schemas.includes(query.schema))
        throw new ConnectorError('not_found', `Schema ${query.schema} does not exist in database ${c.database}`, {
          schema: query.schema,
          database: c.database,
        });
      const tables = await s.query('SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME', [query.schema]);
      const spatial = await s.query(
        "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = ? AND DATA_TYPE IN ('GEOGRAPHY', 'GEOMETRY') ORDER BY TABLE_NAME, ORDINAL_POSITION",
        [query.schema],
      );
      const first = new Map<string, string>();
      for (const r of spatial) if (!first.has(String(r.TABLE_NAME))) first.set(String(r.TABLE_NAME), String(r.DATA_TYPE));
      return {
        ...base,
        schema: query.schema,
        tables: tables
          .map((r) => String(r.TABLE_NAME))
          .filter((t) => !t.startsWith(INTERNAL_PREFIX))
          .map((name) => ({ schema: query.schema!, name, has_geometry: first.has(name), geometry_type: first.get(name) ?? null })),
      };
    });
  },
  ...sqlBehaviour({ extract: extractSnowflake, changed: snowflakeChanged, deliver: deliverSnowflake }),
});
