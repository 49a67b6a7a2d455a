import { ConnectorError } from '../../../domain/transfers.js';
import type { ConnectorContext, TestResult } from '../../types.js';
import { egressAddress } from '../policy/egress.js';
import { probeTest, type ProbeFound } from '../test-result.js';

/*
 * A database session, opened, used and closed the same way by every SQL type: the outbound
 * policy checks the endpoint and the driver connects to the address it checked (no second
 * lookup), within the caller's signal; every error of the conversation becomes a ConnectorError
 * through the driver's own classifier (its error codes, never message text); the signal
 * interrupts whatever the session is doing; and the session is always closed. What differs
 * between drivers (how to connect, interrupt and close, the codes, TLS) is a SessionDriver in
 * each connector's client.ts.
 */

export interface SessionDriver<C, S> {
  /** "PostgreSQL at db:5432": the start of every message. */
  describe(config: C): string;
  /** What was tried, for error details and test results: never a secret. */
  tried(config: C): TestResult['tried'];
  /** Any error of the conversation as a ConnectorError (a ConnectorError passes unchanged). */
  classify(error: unknown, what: string, details?: Record<string, unknown>): ConnectorError;
  /** Longest wait for a connection; a cleanup session gets twice this. */
  connectTimeoutMs: number;
  /**
   * Where the connection goes, for the outbound policy; the driver then connects to the address
   * it checked. Absent for a driver whose own HTTP agents are pinned (snowflake-sdk).
   */
  endpoint?(config: C): { host: string; port: number };
  /**
   * Connects (to `address`, the checked one, when there is an endpoint). `signal` fires when the
   * caller stops waiting: a driver that can end a pending connect at once does.
   */
  open(config: C, address: string | null, signal: AbortSignal): Promise<S>;
  /** Makes the session's running call fail at once (the caller's signal fired). */
  interrupt(session: S): void;
  /** Ends the session; never throws. */
  close(session: S): Promise<void>;
}

/**
 * `work`, or `stopped()` as soon as the signal fires, whichever comes first: for clients that
 * cannot be cancelled, whose late answer is dropped (`late` disposes of it, a late session say).
 */
export async function untilAborted<T>(signal: AbortSignal, work: Promise<T>, stopped: () => Error, late?: (value: T) => unknown): Promise<T> {
  if (signal.aborted) {
    work.then(late, () => undefined);
    throw stopped();
  }
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(stopped());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, aborted]);
  } catch (error) {
    // The signal won: what arrives later is nobody's.
    if (signal.aborted) work.then(late, () => undefined);
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A connected session, the endpoint checked by the outbound policy first; a session that arrives after the signal is closed. */
export async function openSession<C, S>(driver: SessionDriver<C, S>, config: C, ctx: ConnectorContext): Promise<S> {
  const what = driver.describe(config);
  if (ctx.signal.aborted) throw new ConnectorError('timeout', `${what}: stopped before connecting`, driver.tried(config));
  try {
    const endpoint = driver.endpoint?.(config);
    const address = endpoint ? await egressAddress(endpoint.host, endpoint.port) : null;
    const pending = driver.open(config, address, ctx.signal);
    return await untilAborted(
      ctx.signal,
      pending,
      () => new ConnectorError('timeout', `${what} did not answer in time`, driver.tried(config)),
      (late) => driver.close(late),
    );
  } catch (error) {
    throw driver.classify(error, what, driver.tried(config));
  }
}

/** Runs fn on a session already open (left open): the signal interrupts it, errors are classified. */
export async function onSession<C, S, T>(driver: SessionDriver<C, S>, config: C, ctx: ConnectorContext, session: S, fn: (s: S) => Promise<T>): Promise<T> {
  const interrupt = () => driver.interrupt(session);
  if (ctx.signal.aborted) interrupt();
  ctx.signal.addEventListener('abort', interrupt, { once: true });
  try {
    return await fn(session);
  } catch (error) {
    if (ctx.signal.aborted && !(error instanceof ConnectorError))
      throw new ConnectorError('timeout', `${driver.describe(config)}: stopped (deadline or cancellation)`, driver.tried(config));
    throw driver.classify(error, driver.describe(config), driver.tried(config));
  } finally {
    ctx.signal.removeEventListener('abort', interrupt);
  }
}

/** Runs fn with a new session and always closes it; errors are classified; the signal interrupts it. */
export async function withSession<C, S, T>(driver: SessionDriver<C, S>, config: C, ctx: ConnectorContext, fn: (s: S) => Promise<T>): Promise<T> {
  const session = await openSession(driver, config, ctx);
  try {
    return await onSession(driver, config, ctx, session, fn);
  } finally {
    await driver.close(session);
  }
}

/**
 * Cleanup after a delivery (dropping a staging table), which runs after a failure or a
 * cancellation too: a session of its own with a deadline of its own, whose failure is ignored
 * (what it leaves, the next delivery's cleanup finds).
 */
export async function cleanupSession<C, S>(driver: SessionDriver<C, S>, config: C, ctx: ConnectorContext, fn: (s: S) => Promise<unknown>): Promise<void> {
  await withSession(driver, config, { ...ctx, signal: AbortSignal.timeout(2 * driver.connectTimeoutMs) }, fn).catch(() => undefined);
}

/** The session functions of one driver, bound to it. */
export function sessionsOf<C, S>(driver: SessionDriver<C, S>) {
  return {
    driver,
    open: (config: C, ctx: ConnectorContext) => openSession(driver, config, ctx),
    on: <T>(config: C, ctx: ConnectorContext, session: S, fn: (s: S) => Promise<T>) => onSession(driver, config, ctx, session, fn),
    with: <T>(config: C, ctx: ConnectorContext, fn: (s: S) => Promise<T>) => withSession(driver, config, ctx, fn),
    cleanup: (config: C, ctx: ConnectorContext, fn: (s: S) => Promise<unknown>) => cleanupSession(driver, config, ctx, fn),
    /** The type's connection test: `probe` on a new session says what it found; a failure is the result's classified status. */
    test: (config: C, ctx: ConnectorContext, probe: (s: S) => Promise<ProbeFound>) =>
      probeTest(
        driver.tried(config),
        () => withSession(driver, config, ctx, probe),
        (error) => driver.classify(error, driver.describe(config)),
      ),
  };
}
