import { describe, expect, it } from 'vitest';
import { ConnectorError } from '../../../domain/transfers.js';
import type { ConnectorContext } from '../../types.js';
import { cleanupSession, untilAborted, withSession, type SessionDriver } from './session.js';

interface Fake {
  id: number;
  closed: boolean;
  interrupted: boolean;
}

/** A driver whose sessions are objects; `connect` decides how (and when) open answers. */
function fakeDriver(connect: (address: string | null, signal: AbortSignal) => Promise<Fake>, endpoint?: { host: string; port: number }) {
  const opened: (string | null)[] = [];
  const driver: SessionDriver<{ name: string }, Fake> = {
    describe: (c) => `Fake at ${c.name}`,
    tried: (c) => ({ name: c.name }),
    classify: (error, what, details) =>
      error instanceof ConnectorError ? error : new ConnectorError('invalid_data', `${what}: ${(error as Error).message}`, details ?? {}),
    connectTimeoutMs: 50,
    ...(endpoint ? { endpoint: () => endpoint } : {}),
    open: (_config, address, signal) => {
      opened.push(address);
      return connect(address, signal);
    },
    interrupt: (s) => {
      s.interrupted = true;
    },
    close: async (s) => {
      s.closed = true;
    },
  };
  return { driver, opened };
}

const ctxOf = (signal: AbortSignal) => ({ signal, workDir: '/nonexistent' }) as unknown as ConnectorContext;
const config = { name: 'db' };
const session = (id = 1): Fake => ({ id, closed: false, interrupted: false });

describe('a database session', () => {
  it('runs fn on a new session and always closes it; a driver error is classified by the driver', async () => {
    const s = session();
    const { driver } = fakeDriver(async () => s);
    expect(await withSession(driver, config, ctxOf(new AbortController().signal), async (x) => x.id)).toBe(1);
    expect(s.closed).toBe(true);

    const t = session(2);
    const failing = fakeDriver(async () => t).driver;
    const error = await withSession(failing, config, ctxOf(new AbortController().signal), async () => {
      throw new Error('relation missing');
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'invalid_data', message: 'Fake at db: relation missing', details: { name: 'db' } });
    expect(t.closed).toBe(true);
  });

  it('connects to the address the outbound policy checked, and not at all where the policy refuses', async () => {
    const allowed = fakeDriver(async () => session(), { host: '127.0.0.1', port: 5432 });
    await withSession(allowed.driver, config, ctxOf(new AbortController().signal), async () => undefined);
    expect(allowed.opened).toEqual(['127.0.0.1']);

    const metadata = fakeDriver(async () => session(), { host: '169.254.169.254', port: 80 });
    const error = await withSession(metadata.driver, config, ctxOf(new AbortController().signal), async () => undefined).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'refused_by_policy' });
    expect(metadata.opened).toEqual([]);
  });

  it('does not connect once the signal fired, and gives up on a connect that does not answer, closing the late session', async () => {
    const never = fakeDriver(async () => session());
    const stopped = AbortSignal.abort();
    await expect(withSession(never.driver, config, ctxOf(stopped), async () => undefined)).rejects.toMatchObject({
      reason: 'timeout',
      message: 'Fake at db: stopped before connecting',
    });
    expect(never.opened).toEqual([]);

    const late = session();
    let arrive: (s: Fake) => void = () => undefined;
    let connectSignal: AbortSignal | undefined;
    const slow = fakeDriver(
      (_address, signal) =>
        new Promise<Fake>((resolve) => {
          connectSignal = signal;
          arrive = resolve;
        }),
    );
    const controller = new AbortController();
    const pending = withSession(slow.driver, config, ctxOf(controller.signal), async () => 'used');
    await new Promise((r) => setImmediate(r));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ reason: 'timeout', message: 'Fake at db did not answer in time' });
    // The driver saw the signal (to end its connect), and a session that still arrives is closed.
    expect(connectSignal?.aborted).toBe(true);
    arrive(late);
    await new Promise((r) => setImmediate(r));
    expect(late.closed).toBe(true);
  });

  it('interrupts the running call when the signal fires, and reports a timeout rather than what the interruption broke', async () => {
    const s = session();
    const { driver } = fakeDriver(async () => s);
    const controller = new AbortController();
    const error = await withSession(driver, config, ctxOf(controller.signal), async (x) => {
      controller.abort();
      expect(x.interrupted).toBe(true);
      throw new Error('socket closed');
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'timeout', message: 'Fake at db: stopped (deadline or cancellation)' });
    expect(s.closed).toBe(true);
  });

  it('runs a cleanup on a session of its own deadline, even after the caller gave up, and never throws', async () => {
    const s = session();
    const { driver } = fakeDriver(async () => s);
    let ran = false;
    await cleanupSession(driver, config, ctxOf(AbortSignal.abort()), async () => {
      ran = true;
      throw new Error('drop failed');
    });
    expect(ran).toBe(true);
    expect(s.closed).toBe(true);
  });

  it('waits for work until the signal fires, then hands what arrives late to be disposed of', async () => {
    expect(await untilAborted(new AbortController().signal, Promise.resolve(3), () => new Error('stopped'))).toBe(3);
    const controller = new AbortController();
    let resolve: (v: number) => void = () => undefined;
    const disposed: number[] = [];
    const waiting = untilAborted(
      controller.signal,
      new Promise<number>((r) => {
        resolve = r;
      }),
      () => new Error('stopped'),
      (v) => disposed.push(v),
    );
    controller.abort();
    await expect(waiting).rejects.toThrow('stopped');
    resolve(4);
    await new Promise((r) => setImmediate(r));
    expect(disposed).toEqual([4]);
  });
});
