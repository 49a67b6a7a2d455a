import { ConnectorError } from '../../domain/transfers.js';
import { sqlBehaviour } from '../shared/sql/definition.js';
import { query, testConnection, withConnection } from './client.js';
import { deliverSqlServer } from './deliver.js';
import { extractSqlServer, sqlServerChanged } from './extract.js';
import { schemasQuery, tablesQuery } from './sql.js';
import { sqlserverDeclaration } from './declaration.js';
import { defineConnector } from '../types.js';

export const sqlserver = defineConnector(sqlserverDeclaration, {
  test: (c, ctx) =>
    testConnection(c, ctx, async (connection) => {
      const version = String((await query(connection, "SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(128))")).rows[0]![0]);
      return { message: `Connected to SQL Server ${version} as ${c.username}${c.encrypt ? ' over TLS' : ''}`, tried: { tls: c.encrypt } };
    }),
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
  ...sqlBehaviour({ extract: extractSqlServer, changed: sqlServerChanged, deliver: deliverSqlServer }),
});
