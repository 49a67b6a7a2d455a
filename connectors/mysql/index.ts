import { sqlDestinationBehaviour, sqlSourceBehaviour } from '../shared/sql/definition.js';
import { probeTest } from '../shared/test-result.js';
import { classifyMysql, describeServer, triedOf, withConnection } from './client.js';
import { deliverMysql } from './deliver.js';
import { extractMysql, mysqlChanged } from './extract.js';
import { mysqlDeclaration } from './declaration.js';
import { defineConnector } from '../types.js';

const source = sqlSourceBehaviour({ extract: extractMysql, changed: mysqlChanged });

const destination = sqlDestinationBehaviour(deliverMysql);

export const mysql = defineConnector(mysqlDeclaration, {
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const version = await withConnection(c, ctx, async (connection) => {
          const [r] = await connection.query('SELECT VERSION() AS version');
          return String((r as { version: string }[])[0]!.version);
        });
        return { message: `Connected to ${/mariadb/i.test(version) ? 'MariaDB' : 'MySQL'} ${version} as ${c.username}${c.ssl ? ' over TLS' : ''}` };
      },
      (error) => classifyMysql(error, describeServer(c)),
    );
  },
  source,
  destination,
});
