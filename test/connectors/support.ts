import { readdirSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';
import type { ConnectorDefinition } from '../../connectors/types.js';

// Built in devservers/ so the warehouses bench can hand a connector the same call as the specs.
import { connectorContext } from '../../devservers/connector-context.js';

export { connectorContext };
export { deliverInput } from '../../devservers/connector-context.js';

/** Files left in a work folder (a failed extract must leave none). */
export const filesIn = (dir: string) => readdirSync(dir);

/** A port nobody listens on (taken, then released). */
export async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Awaits a promise that must fail with a ConnectorError of `reason`; returns it for more checks. */
export async function expectConnectorError(promise: Promise<unknown>, reason: ConnectorFailureReason): Promise<ConnectorError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected a ConnectorError (${reason}), but the call succeeded`);
    },
    (e: unknown) => e,
  );
  expect(error, String(error)).toBeInstanceOf(ConnectorError);
  expect((error as ConnectorError).reason, (error as Error).message).toBe(reason);
  return error as ConnectorError;
}

/** A TCP server that accepts connections and never says a word: a server that hangs. */
export async function silentServer(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/**
 * A TCP proxy to a PostgreSQL server that passes the first `passing` connections through, and of
 * every later one passes the startup and authentication and never the first query (a simple
 * query or a Parse): a server that lets a client in and then never answers. `close` hangs up on
 * every connection (may be called again).
 */
export async function stallingPgProxy(to: { host: string; port: number }, passing: number): Promise<{ port: number; connections(): number; close(): void }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const proxy = createServer((client) => {
    const stall = ++connections > passing;
    const server = connect(to.port, to.host);
    sockets.add(client).add(server);
    for (const s of [client, server]) s.on('error', () => undefined);
    // Either side hanging up hangs up the other (a server ending a session, a client closing it).
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    let pending = Buffer.alloc(0);
    let startup = true;
    let stalled = false;
    client.on('data', (chunk: Buffer) => {
      if (stalled) return;
      if (!stall) return void server.write(chunk);
      // Frontend messages: the startup one without a type byte, then a type byte and a length.
      pending = Buffer.concat([pending, chunk]);
      while (!stalled) {
        const header = startup ? 4 : 5;
        if (pending.length < header) break;
        const length = pending.readInt32BE(startup ? 0 : 1) + (startup ? 0 : 1);
        if (!startup && (pending[0] === 0x51 || pending[0] === 0x50)) stalled = true;
        else if (pending.length >= length) {
          server.write(pending.subarray(0, length));
          pending = pending.subarray(length);
          startup = false;
        } else break;
      }
    });
    server.on('data', (chunk: Buffer) => {
      if (!stalled) client.write(chunk);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    port: (proxy.address() as AddressInfo).port,
    connections: () => connections,
    close() {
      for (const s of sockets) s.destroy();
      proxy.close();
    },
  };
}

/**
 * A reader that keeps reading a number (a row count) in a loop, as a dashboard would, until
 * stopped: it returns how often it saw each value and every error it got (stop may be called again).
 */
export function pollUntilStopped(read: () => Promise<number>): { stop(): Promise<{ seen: Map<number, number>; errors: string[] }> } {
  const seen = new Map<number, number>();
  const errors: string[] = [];
  let polling = true;
  const loop = (async () => {
    while (polling) {
      try {
        const n = await read();
        seen.set(n, (seen.get(n) ?? 0) + 1);
      } catch (error) {
        errors.push((error as Error).message);
      }
    }
  })();
  return {
    async stop() {
      polling = false;
      await loop;
      return { seen, errors };
    },
  };
}

/**
 * What a database type's driver must answer before any server exists, against loopback ports: a
 * closed port is `unreachable` and a port that never speaks a `timeout` at the deadline, neither
 * naming the password. `configAt` gives a configuration for a port with the password `PLANTED-pw`
 * (the SQL Server and Oracle unit specs; their contract suites, test/connectors/sql-contract.ts,
 * run the same closed port through the API).
 */
export function loopbackDriverCases<C extends object>(connector: ConnectorDefinition<C>, configAt: (port: number) => C): void {
  describe(`${connector.type} through its driver against loopback ports`, () => {
    let silent: Awaited<ReturnType<typeof silentServer>>;
    beforeAll(async () => {
      silent = await silentServer();
    });
    afterAll(() => silent?.close());
    const ctx = (ms: number) => connectorContext({ signal: AbortSignal.timeout(ms), workDir: tmpdir(), maxBytes: 1 });

    it('answers a closed port as unreachable, without the password', async () => {
      const result = await connector.test(configAt(await closedPort()), ctx(5000));
      expect(result).toMatchObject({ ok: false, status: 'unreachable' });
      expect(JSON.stringify(result)).not.toContain('PLANTED-pw');
    });

    it('answers a port that never speaks as a timeout at the deadline', async () => {
      const result = await connector.test(configAt(silent.port), ctx(800));
      expect(result).toMatchObject({ ok: false, status: 'timeout' });
      expect(JSON.stringify(result)).not.toContain('PLANTED-pw');
    });
  });
}
