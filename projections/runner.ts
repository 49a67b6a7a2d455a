import { sql, type DatabasePool } from 'slonik';
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

  /**
   * How many events each projector has still to apply, counted up to `cap` (the metrics'
   * geoflow_projection_lag_events): its stored checkpoint against the events the store holds past
   * it. One read of at most `cap` events past the lowest checkpoint; none to read when all are
   * caught up.
   */
  async lag(cap = 1000): Promise<{ projector: string; events: number }[]> {
    const rows = await this.pool.any(
      sql.type(z.object({ projector: z.string(), position: z.coerce.bigint() }))`
        SELECT projector, position FROM ${sql.identifier([this.schema, 'checkpoints'])}
        WHERE projector = ANY(${sql.array(
          this.projectors.map((p) => p.name),
          'text',
        )})`,
    );
    const from = lowest(rows.map((r) => r.position));
    const ahead = from === null ? [] : await this.store.readAll(from, cap);
    return rows.map((r) => ({ projector: r.projector, events: ahead.filter((e) => e.position > r.position).length }));
  }

  /** Applies everything up to the head once; used by rebuilds and tests. */
  async catchUp(): Promise<void> {
    while (await this.passOrSteps()) {
      /* keep going until a pass applies nothing */
    }
    this.advance(await minCheckpoint(this.pool, this.schema, this.projectors));
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.notified = false;
      let progressed = false;
      try {
        progressed = await this.passOrSteps();
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

  /**
   * One pass over every projector, together (see pass); if that fails, each projector on its own,
   * so that an event one projector cannot apply holds up only that projector's tables.
   */
  private async passOrSteps(): Promise<boolean> {
    try {
      const reached = await this.pass();
      if (reached === null) return false;
      this.advance(reached);
      return true;
    } catch (error) {
      let progressed = false;
      let failure: unknown;
      for (const projector of this.projectors) {
        try {
          if ((await this.pass([projector])) !== null) progressed = true;
        } catch (stepError) {
          failure ??= stepError;
        }
      }
      this.advance(await minCheckpoint(this.pool, this.schema, this.projectors));
      // The pass's own error when every projector alone went through (nothing lost: it rolled back).
      if (failure !== undefined) throw failure;
      if (!progressed) throw error;
      return progressed;
    }
  }

  /**
   * One batch for every projector (or the given ones) in one transaction: their checkpoints
   * locked in one query, the events read once from the lowest of them, each projector given the
   * events past its own checkpoint (and not past those it follows, as they stand after this
   * pass), the checkpoints written in one statement. A pass used to be a transaction per projector, each reading the
   * same events: about thirty round trips every half second at rest and after every append
   * (issue 20). Answers the lowest checkpoint after the pass, or null when nothing was applied.
   */
  private async pass(projectors = this.projectors): Promise<bigint | null> {
    return inTransaction(this.pool, async (tx) => {
      const checkpoints = sql.identifier([this.schema, 'checkpoints']);
      const ours = projectors.map((p) => p.name);
      const rows = await tx.any(
        sql.type(z.object({ projector: z.string(), position: z.coerce.bigint() }))`
          SELECT projector, position FROM ${checkpoints} WHERE projector = ANY(${sql.array(ours, 'text')})
          ORDER BY projector FOR UPDATE`,
      );
      const at = new Map(rows.map((r) => [r.projector, r.position]));
      // Projectors followed but not in this pass (another runner's, or a projector run alone after
      // a failed pass): their committed checkpoints.
      const elsewhere = [...new Set(projectors.flatMap((p) => p.follows ?? []))].filter((n) => !at.has(n));
      if (elsewhere.length) {
        const others = await tx.any(
          sql.type(z.object({ projector: z.string(), position: z.coerce.bigint() }))`
            SELECT projector, position FROM ${checkpoints} WHERE projector = ANY(${sql.array(elsewhere, 'text')})`,
        );
        for (const r of others) at.set(r.projector, r.position);
      }
      const from = lowest(ours.map((n) => at.get(n)!))!;
      const events = await this.store.readAll(from, BATCH);
      if (events.length === 0) return null;
      const moved: { name: string; position: bigint }[] = [];
      // In registry order, so a followed projector has applied this batch before its followers look.
      for (const projector of projectors) {
        const current = at.get(projector.name)!;
        const followed = (projector.follows ?? []).filter((n) => at.has(n)).map((n) => at.get(n)!);
        const bound = lowest(followed);
        const mine = events.filter((e) => e.position > current && (bound === null || e.position <= bound));
        if (mine.length === 0) continue;
        for (const event of mine) await projector.apply(tx, this.schema, event);
        const last = mine[mine.length - 1]!.position;
        at.set(projector.name, last);
        moved.push({ name: projector.name, position: last });
      }
      if (moved.length === 0) return null;
      const names = sql.array(
        moved.map((m) => m.name),
        'text',
      );
      const positions = sql.array(
        moved.map((m) => m.position.toString()),
        'int8',
      );
      await tx.query(sql.unsafe`UPDATE ${checkpoints} AS c SET position = m.position, updated_at = now()
        FROM unnest(${names}, ${positions}) AS m(projector, position) WHERE c.projector = m.projector`);
      return lowest(ours.map((n) => at.get(n)!))!;
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

/** The smallest of some positions (bigints, which Math.min does not take), or null for none. */
function lowest(values: bigint[]): bigint | null {
  let min: bigint | null = null;
  for (const v of values) if (min === null || v < min) min = v;
  return min;
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
