import { probeTest } from '../shared/test-result.js';
import { classifyMysql, describeServer, triedOf, withConnection, type MysqlConfig } from './client.js';
import { deliverMysql, type MysqlTarget } from './deliver.js';
import { extractMysql, mysqlChanged, type MysqlResource } from './extract.js';
import { mysqlDeclaration } from './declaration.js';
import { defineConnector, type DestinationBehaviour, type SourceBehaviour } from '../types.js';

const source = {
  extract: (config, resource, ctx, options) => extractMysql(config, resource, ctx, options),
  changeCheck: {
    changed: (config, resource, ctx, sync) => mysqlChanged(config, resource, ctx, sync?.cursor),
  },
} satisfies SourceBehaviour<MysqlResource, MysqlConfig>;

const destination = {
  deliver: (config, target, input, ctx) => deliverMysql(config, target, input, ctx),
} satisfies DestinationBehaviour<MysqlTarget, MysqlConfig>;

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
