import { sqlBehaviour } from '../shared/sql/definition.js';
import { testConnection } from './client.js';
import { deliverMysql } from './deliver.js';
import { extractMysql, mysqlChanged } from './extract.js';
import { mysqlDeclaration } from './declaration.js';
import { defineConnector } from '../types.js';

export const mysql = defineConnector(mysqlDeclaration, {
  test: (c, ctx) =>
    testConnection(c, ctx, async (connection) => {
      const [r] = await connection.query('SELECT VERSION() AS version');
      const version = String((r as { version: string }[])[0]!.version);
      return { message: `Connected to ${/mariadb/i.test(version) ? 'MariaDB' : 'MySQL'} ${version} as ${c.username}${c.ssl ? ' over TLS' : ''}` };
    }),
  ...sqlBehaviour({ extract: extractMysql, changed: mysqlChanged, deliver: deliverMysql }),
});
