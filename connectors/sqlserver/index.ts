import { ConnectorError } from '../../domain/transfers.js';
import { probeTest } from '../shared/test-result.js';
import { classifySqlServer, describeServer, query, triedOf, withConnection, type SqlServerConfig } from './client.js';
import { deliverSqlServer, type SqlServerTarget } from './deliver.js';
import { extractSqlServer, sqlServerChanged, type SqlServerResource } from './extract.js';
import { schemasQuery, tablesQuery } from './sql.js';
import { sqlserverDeclaration } from './declaration.js';
import { defineConnector, type DestinationBehaviour, type SourceBehaviour } from '../types.js';

const source = {
  extract: (config, resource, ctx, options) => extractSqlServer(config, resource, ctx, options),
  changeCheck: {
    changed: (config, resource, ctx, sync) => sqlServerChanged(config, resource, ctx, sync?.cursor),
  },
} satisfies SourceBehaviour<SqlServerResource, SqlServerConfig>;

const destination = {
  deliver: (config, target, input, ctx) => deliverSqlServer(config, target, input, ctx),
} satisfies DestinationBehaviour<SqlServerTarget, SqlServerConfig>;

export const sqlserver = defineConnector(sqlserverDeclaration, {
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const version = await withConnection(c, ctx, async (connection) =>
          String((await query(connection, "SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(128))")).rows[0]![0]),
        );
        return { message: `Connected to SQL Server ${version} as ${c.username}${c.encrypt ? ' over TLS' : ''}`, tried: { tls: c.encrypt } };
      },
      (error) => classifySqlServer(error, describeServer(c)),
    );
  },
  async discover(c, q, ctx) {
    return withConnection(c, ctx, async (connection) => {
      const schemas = (await query(connection, schemasQuery)).rows.map((r) => String(r[0]));
      if (q.schema === undefined) return { host: c.host, database: c.database, schemas };
      if ((await query(connection, 'SELECT SCHEMA_ID(@s)', { s: q.schema })).rows[0]?.[0] === null) {
        throw new ConnectorError('not_found', `Schema "${q.schema}" does not exist in database ${c.database}`, { schema: q.schema, database: c.database });
      }
      const tables = (await query(connection, tablesQuery, { schema: q.schema })).rows.map((r) => ({
        schema: q.schema!,
        name: String(r[0]),
        has_geometry: r[1] !== null,
        geometry_type: r[1] !== null ? 'GEOMETRY' : null,
      }));
      return { host: c.host, database: c.database, schemas, schema: q.schema, tables };
    });
  },
  source,
  destination,
});
