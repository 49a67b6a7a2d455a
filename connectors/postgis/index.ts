import { sqlBehaviour } from '../shared/sql/definition.js';
import { listSchemas, listTables, requireSchema } from './catalog.js';
import { testConnection, withClient } from './client.js';
import { deliverPostgis } from './deliver.js';
import { extractPostgis, postgisChanged } from './extract.js';
import { closeIdle } from './pool.js';
import { postgisDeclaration } from './declaration.js';
import { defineConnector } from '../types.js';

export const postgis = defineConnector(postgisDeclaration, {
  test: (c, ctx) =>
    testConnection(c, ctx, async (client) => {
      const r = await client.query<{ server: string; postgis: string | null; tls: boolean }>(
        `SELECT current_setting('server_version') AS server,
                (SELECT extversion FROM pg_extension WHERE extname = 'postgis') AS postgis,
                COALESCE((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS tls`,
      );
      const found = r.rows[0]!;
      const postgisNote = found.postgis ? `PostGIS ${found.postgis}` : 'PostGIS is not installed in this database (it can hold tables without geometry only)';
      return {
        message: `Connected to PostgreSQL ${found.server} as ${c.username}${found.tls ? ' over TLS' : ''}; ${postgisNote}`,
        tried: { tls: found.tls },
      };
    }),
  async discover(c, query, ctx) {
    return withClient(c, ctx, async (client) => {
      const schemas = await listSchemas(client);
      if (query.schema === undefined) return { host: c.host, database: c.database, schemas };
      await requireSchema(client, query.schema, c.database);
      return { host: c.host, database: c.database, schemas, schema: query.schema, tables: await listTables(client, query.schema) };
    });
  },
  ...sqlBehaviour({ extract: extractPostgis, changed: postgisChanged, deliver: deliverPostgis }),
  closeIdle,
});
