import { ConnectorError } from '../../domain/transfers.js';
import { sqlBehaviour } from '../shared/sql/definition.js';
import { rows, testConnection, withConnection } from './client.js';
import { deliverOracle } from './deliver.js';
import { extractOracle, oracleChanged } from './extract.js';
import { schemasQuery, tablesQuery } from './sql.js';
import { oracleDeclaration } from './declaration.js';
import { defineConnector } from '../types.js';

export const oracle = defineConnector(oracleDeclaration, {
  test: (c, ctx) =>
    testConnection(c, ctx, async (connection) => {
      const version = connection.oracleServerVersionString ?? String((await rows(connection, 'SELECT banner FROM v$version WHERE ROWNUM = 1'))[0]?.[0] ?? '');
      return { message: `Connected to Oracle Database ${version} as ${c.username}` };
    }),
  async discover(c, q, ctx) {
    return withConnection(c, ctx, async (connection) => {
      const schemas = (await rows(connection, schemasQuery)).map((r) => String(r[0]));
      const database = c.service_name ?? c.connect_string ?? '';
      const host = c.host ?? c.connect_string ?? '';
      if (q.schema === undefined) return { host, database, schemas };
      if (!(await rows(connection, 'SELECT 1 FROM all_users WHERE username = :u', { u: q.schema })).length) {
        throw new ConnectorError('not_found', `Schema "${q.schema}" does not exist in database ${database}`, { schema: q.schema, database });
      }
      const tables = (await rows(connection, tablesQuery, { owner: q.schema })).map((r) => ({
        schema: q.schema!,
        name: String(r[0]),
        has_geometry: r[1] !== null,
        geometry_type: r[1] !== null ? 'GEOMETRY' : null,
      }));
      return { host, database, schemas, schema: q.schema, tables };
    });
  },
  ...sqlBehaviour({ extract: extractOracle, changed: oracleChanged, deliver: deliverOracle }),
});
