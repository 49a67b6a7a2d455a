import { sql, type DatabasePool, type DatabaseTransactionConnection, type IdentifierSqlToken } from 'slonik';
import { z } from 'zod';
import type { EventStore } from '../eventstore/port.js';
import type { Projector } from './projector.js';
import { inTransaction } from '../platform/db.js';

export const LIVE_SCHEMA = 'rm';
const BATCH = 500;
const POLL_MS = 500;

/**
 * Runs projectors from their checkpoints. For each batch, the rows and the checkpoint are
 * written in one transaction, and the checkpoint row is locked FOR UPDATE, so two processes
 * running the same projector take turns instead of applying an event twice.
 */
export class ProjectionRunner {
  private running = false;
  private wake: (() => void) | undefined;
  /** Set by an append (or a waiter) since the current pass began: the loop does not sleep then. */
  private notified = false;
  private stopListening: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private caughtUpTo = 0n;
  private waiters: { position: bigint; resolve: () => void }[] = [];
  private lastError: unknown;

  constructor(
    private readonly store: EventStore,
    private readonly pool: DatabasePool,
    private readonly projectors: Projector[],
    private readonly schema = LIVE_SCHEMA,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  async init(): Promise<void> {
    await ensureSchema(this.pool, this.schema, this.projectors);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopListening = this.store.onAppended(() => this.nudge());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopListening?.();
    this.nudge();
    await this.loop;
  }

  /**
   * New events may be there. An append announced while a pass runs (after it read the events)
   * used to go to the previous sleep's resolver and be lost, and the loop then slept its full
   * POLL_MS: up to half a second before a Run's end reached its read model.
   */
  private nudge(): void {
    this.notified = true;
    this.wake?.();
  }

  /** Resolves once every projector has applied the event at `position` (read-your-writes). */
  async waitFor(position: bigint, timeoutMs = 10_000): Promise<void> {
    if (this.caughtUpTo >= position) return;
    const deadline = Date.now() + timeoutMs;
    await new Promise<void>((resolve, reject) => {
      const waiter = { position, resolve };
      this.waiters.push(waiter);
      this.nudge();
      // Another process may be the one projecting: check the stored checkpoints too.
      const timer = setInterval(async () => {
        if (this.caughtUpTo >= position) return;
        const stored = await minCheckpoint(this.pool, this.schema, this.projectors).catch(() => 0n);
        if (stored >= position) this.advance(stored);
        else if (Date.now() > deadline) {
          clearInterval(timer);
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(new Error(`read model did not reach position ${position} in ${timeoutMs} ms: ${String(this.lastError ?? 'no error seen')}`));
        }
      }, 50);
      waiter.resolve = () => {
        clearInterval(timer);
        resolve();
      };
    });
  }

  /** Applies everything up to the head once; used by rebuilds and tests. */
  async catchUp(): Promise<void> {
    for (const projector of this.projectors) {
      while (await this.step(projector)) {
        /* keep going until a batch comes back empty */
      }
    }
    this.advance(await minCheckpoint(this.pool, this.schema, this.projectors));
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.notified = false;
      let progressed = false;
      try {
        for (const projector of this.projectors) {
          if (await this.step(projector)) progressed = true;
        }
        this.advance(await minCheckpoint(this.pool, this.schema, this.projectors));
        this.lastError = undefined;
      } catch (error) {
        this.lastError = error;
        this.onError(error);
      }
      if (!progressed && this.running && !this.notified) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  /** One batch for one projector; true when it applied anything. */
  private async step(projector: Projector): Promise<boolean> {
    return inTransaction(this.pool, async (tx) => {
      const checkpoints = sql.identifier([this.schema, 'checkpoints']);
      const current = await tx.oneFirst(
        sql.type(z.object({ position: z.coerce.bigint() }))`
          SELECT position FROM ${checkpoints} WHERE projector = ${projector.name} FOR UPDATE`,
      );
      const bound = projector.follows?.length ? await followedCheckpoint(tx, checkpoints, projector.follows) : null;
      if (bound !== null && bound <= current) return false;
      const events = (await this.store.readAll(current, BATCH)).filter((e) => bound === null || e.position <= bound);
      if (events.length === 0) return false;
      for (const event of events) await projector.apply(tx, this.schema, event);
      const last = events[events.length - 1]!.position;
      await tx.query(sql.unsafe`UPDATE ${checkpoints} SET position = ${last.toString()}, updated_at = now()
        WHERE projector = ${projector.name}`);
      return true;
    });
  }

  private advance(position: bigint): void {
    if (position > this.caughtUpTo) this.caughtUpTo = position;
    const ready = this.waiters.filter((w) => w.position <= this.caughtUpTo);
    this.waiters = this.waiters.filter((w) => w.position > this.caughtUpTo);
    ready.forEach((w) => {
      w.resolve();
    });
  }
}

export async function ensureSchema(pool: DatabasePool, schema: string, projectors: Projector[]): Promise<void> {
  await inTransaction(pool, async (tx) => {
    // Serialise concurrent starts; CREATE … IF NOT EXISTS is not race-free on its own.
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext(${`schema:${schema}`}))`);
    await tx.query(sql.unsafe`CREATE SCHEMA IF NOT EXISTS ${sql.identifier([schema])}`);
    const checkpoints = sql.identifier([schema, 'checkpoints']);
    await tx.query(sql.unsafe`CREATE TABLE IF NOT EXISTS ${checkpoints} (
      projector text PRIMARY KEY, position bigint NOT NULL DEFAULT 0, version integer NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await tx.query(sql.unsafe`ALTER TABLE ${checkpoints} ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 0`);
    for (const projector of projectors) {
      const stored = await tx.maybeOneFirst(
        sql.type(z.object({ version: z.number() }))`SELECT version FROM ${checkpoints} WHERE projector = ${projector.name}`,
      );
      if (stored !== null && stored !== projector.version) {
        // The projector changed shape: drop its tables and replay it from the first event.
        for (const table of projector.tables) await tx.query(sql.unsafe`DROP TABLE IF EXISTS ${sql.identifier([schema, table])} CASCADE`);
        await tx.query(sql.unsafe`UPDATE ${checkpoints} SET position = 0, version = ${projector.version} WHERE projector = ${projector.name}`);
      }
      await projector.createTables(tx, schema);
      await tx.query(sql.unsafe`INSERT INTO ${checkpoints} (projector, version) VALUES (${projector.name}, ${projector.version})
        ON CONFLICT DO NOTHING`);
    }
  });
}

/**
 * The lowest committed checkpoint of the projectors another one follows (Projector.follows), or
 * null when none of them is registered here (a runner given a subset of the projectors).
 */
async function followedCheckpoint(tx: DatabaseTransactionConnection, checkpoints: IdentifierSqlToken, names: string[]): Promise<bigint | null> {
  const min = await tx.oneFirst(
    sql.type(z.object({ min: z.coerce.bigint().nullable() }))`
      SELECT min(position) AS min FROM ${checkpoints} WHERE projector = ANY(${sql.array(names, 'text')})`,
  );
  return min;
}

async function minCheckpoint(pool: DatabasePool, schema: string, projectors: Projector[]): Promise<bigint> {
  const names = projectors.map((p) => p.name);
  const min = await pool.oneFirst(
    sql.type(z.object({ min: z.coerce.bigint() }))`
      SELECT coalesce(min(position), 0) AS min FROM ${sql.identifier([schema, 'checkpoints'])}
      WHERE projector = ANY(${sql.array(names, 'text')})`,
  );
  return min;
}

/**
 * Replays every event from position zero into a fresh schema. With `swap`, the rebuilt schema
 * then replaces the live one in one transaction (readers see old or new tables, never half).
 */
export async function rebuildProjections(
  store: EventStore,
  pool: DatabasePool,
  projectors: Projector[],
  options: { target: string; swapInto?: string },
): Promise<void> {
  await pool.query(sql.unsafe`DROP SCHEMA IF EXISTS ${sql.identifier([options.target])} CASCADE`);
  const runner = new ProjectionRunner(store, pool, projectors, options.target);
  await runner.init();
  await runner.catchUp();
  if (options.swapInto) {
    const live = options.swapInto;
    await inTransaction(pool, async (tx) => {
      await tx.query(sql.unsafe`DROP SCHEMA IF EXISTS ${sql.identifier([live])} CASCADE`);
      await tx.query(sql.unsafe`ALTER SCHEMA ${sql.identifier([options.target])} RENAME TO ${sql.identifier([live])}`);
    });
  }
}
