import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { ConnectorContext } from '../../connectors/types.js';

/** What the API or an activity hands a connector: a fresh work folder, a signal, the size limit. */
export function connectorContext(options: { maxBytes?: number; signal?: AbortSignal } = {}): ConnectorContext {
  return {
    signal: options.signal ?? new AbortController().signal,
    log: pino({ level: 'silent' }),
    workDir: mkdtempSync(path.join(tmpdir(), 'svc-connector-')),
    maxBytes: options.maxBytes ?? 512 * 1024 * 1024,
  };
}

/** A TCP server that accepts connections and never says a word: a server that hangs. */
export async function silentServer(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as import('node:net').AddressInfo).port,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as import('node:net').AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}
