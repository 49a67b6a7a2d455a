import { sqlDestinationBehaviour, sqlSourceBehaviour } from '../shared/sql/definition.js';
import { probeTest } from '../shared/test-result.js';
import { listSchemas, listTables, requireSchema } from './catalog.js';
import { classifyPg, describeServer, triedOf, withClient } from './client.js';
import { deliverPostgis } from './deliver.js';
import { extractPostgis, postgisChanged } from './extract.js';
import { closeIdle } from './pool.js';
import { postgisDeclaration } from './declaration.js';
import { defineConnector } from '../types.js';

const source = sqlSourceBehaviour({ extract: extractPostgis, changed: postgisChanged });

const destination = sqlDestinationBehaviour(deliverPostgis);

export const postgis = defineConnector(postgisDeclaration, {
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const found = await withClient(c, ctx, async (client) => {
          const r = await client.query<{ server: string; postgis: string | null; tls: boolean }>(
            `SELECT current_setting('server_version') AS server,
                    (SELECT extversion FROM pg_extension WHERE extname = 'postgis') AS postgis,
                    COALESCE((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS tls`,
          );
          return r.rows[0]!;
        });
        const postgisNote = found.postgis ? `PostGIS ${found.postgis}` : 'PostGIS is not installed in this database (it can hold tables without geometry only)';
        return {
          message: `Connected to PostgreSQL ${found.server} as ${c.username}${found.tls ? ' over TLS' : ''}; ${postgisNote}`,
          tried: { tls: found.tls },
        };
      },
      (error) => classifyPg(error, describeServer(c)),
    );
  },
  async discover(c, query, ctx) {
    return withClient(c, ctx, async (client) => {
      const schemas = await listSchemas(client);
      if (query.schema === undefined) return { host: c.host, database: c.database, schemas };
      await requireSchema(client, query.schema, c.database);
      return { host: c.host, database: c.database, schemas, schema: query.schema, tables: await listTables(client, query.schema) };
    });
  },
  source,
  destination,
  closeIdle,
});
