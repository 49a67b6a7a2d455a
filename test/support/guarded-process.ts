import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { createLogger } from '../../platform/logger.js';
import { guardProcess } from '../../platform/process-guard.js';

/*
 * A process with the guard the API and the worker install (platform/process-guard.ts), for
 * test/api/process-guard.int.spec.ts. It answers on a loopback port (printed on stdout):
 *   GET /library?chain=URL  sends a POST with node-fetch 3.3.2 (the copy gaxios depends on) to a
 *                           307 → 302 chain, where node-fetch throws in a response handler;
 *   GET /ours               throws from this file's own code, where nothing catches;
 *   GET /                   answers "up".
 */

guardProcess(createLogger('info', 'guarded'));
const nodeFetchPath = createRequire(createRequire(import.meta.url).resolve('gaxios')).resolve('node-fetch');
const { default: nodeFetch } = (await import(pathToFileURL(nodeFetchPath).href)) as { default: (url: string, init: object) => Promise<unknown> };

const server = createServer((req, res) => {
  const url = new URL(req.url!, 'http://guarded');
  if (url.pathname === '/library') {
    // The promise never settles once node-fetch has thrown in its handler: nobody waits for it.
    nodeFetch(url.searchParams.get('chain')!, { method: 'POST', body: 'grant_type=refresh_token&refresh_token=x' }).catch(() => undefined);
    return res.end('sent');
  }
  if (url.pathname === '/ours') {
    setImmediate(() => {
      throw new Error('a mistake of our own');
    });
    return res.end('thrown');
  }
  res.end('up');
});
server.listen(0, '127.0.0.1', () => console.log(`port ${(server.address() as AddressInfo).port}`));
