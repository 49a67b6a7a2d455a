import pg from 'pg';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent, Snapshot, StoredEvent } from './port.js';
import { WrongExpectedRevisionError } from './port.js';

/**
 * PostgreSQL event store: one append-only table with a global position.
 *
 * A bigserial alone commits out of order under concurrency (transaction B can commit position 8
 * while A still holds 7), and a reader that saw 8 would skip 7 forever. Appends therefore take a
 * transaction-scoped advisory lock before drawing positions: the next append can only draw its
 * position after the previous one committed, so every reader sees a gap-free prefix.
 */
const APPEND_LOCK = 0x5376_6345; // arbitrary, constant: "SvcE"
const CHANNEL = 'svc_events';

const ddl = `
CREATE TABLE IF NOT EXISTS events (
  position bigserial PRIMARY KEY,
  stream_id text NOT NULL,
  revision integer NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_id, revision)
);
-- Folded states of long streams (a Job records every Run it has had): a cache of the events,
-- never the truth; deleting every row only makes the next loads read whole streams again.
CREATE TABLE IF NOT EXISTS snapshots (
  stream_id text PRIMARY KEY,
  version text NOT NULL,
  revision integer NOT NULL,
  position bigint NOT NULL,
  state jsonb NOT NULL,
  saved_at timestamptz NOT NULL DEFAULT now()
);
CREATE OR REPLACE RULE events_no_update AS ON UPDATE TO events DO INSTEAD NOTHING;
-- Append-only, except a stream that retention removes (deleteStream names it for its own
-- transaction): a DELETE of any other row does nothing.
CREATE OR REPLACE RULE events_no_delete AS ON DELETE TO events
  WHERE old.stream_id IS DISTINCT FROM current_setting('svc.delete_stream', true) DO INSTEAD NOTHING;
-- An append in one round trip (issue 20: four round trips each, about seven appends per Run).
-- p_expected: the stream's last revision, -1 for a stream that must not exist, NULL for any.
CREATE OR REPLACE FUNCTION events_append(p_stream text, p_expected integer, p_types text[], p_data jsonb[], p_metadata jsonb[])
RETURNS TABLE (conflict boolean, actual integer, last_revision integer, last_position bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_current integer;
  v_revision integer;
  v_position bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(${APPEND_LOCK});
  SELECT max(e.revision) INTO v_current FROM events e WHERE e.stream_id = p_stream;
  IF p_expected IS NOT NULL AND p_expected <> coalesce(v_current, -1) THEN
    RETURN QUERY SELECT true, v_current, NULL::integer, NULL::bigint;
    RETURN;
  END IF;
  WITH inserted AS (
    INSERT INTO events (stream_id, revision, type, data, metadata)
    SELECT p_stream, coalesce(v_current, -1) + t.n::integer, t.type, t.data, t.metadata
      FROM unnest(p_types, p_data, p_metadata) WITH ORDINALITY AS t(type, data, metadata, n)
     ORDER BY t.n
    RETURNING events.revision, events.position)
  SELECT max(i.revision), max(i.position) INTO v_revision, v_position FROM inserted i;
  PERFORM pg_notify('${CHANNEL}', v_position::text);
  RETURN QUERY SELECT false, v_current, v_revision, v_position;
END
$fn$;
`;

interface Row {
  position: string;
  stream_id: string;
  revision: number;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  created_at: Date;
}

function toEvent(r: Row): StoredEvent {
  return {
    position: BigInt(r.position),
    streamId: r.stream_id,
    revision: r.revision,
    type: r.type,
    data: r.data,
    metadata: r.metadata,
    createdAt: r.created_at,
  };
}

export class PostgresEventStore implements EventStore {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private listener: pg.Client | undefined;
  private readonly listeners = new Set<() => void>();
  private closed = false;

  constructor(private readonly url: string) {
    // A connection that cannot be made in 5 s fails (as slonik's pool does) instead of waiting for TCP to give up.
    this.pool = new pg.Pool({ connectionString: url, max: 8, connectionTimeoutMillis: 5_000 });
    this.pool.on('error', () => undefined); // idle-client errors surface on the next query
    // A checked-out client whose server goes away (a PostgreSQL restart) emits 'error' after its
    // query failed, when pg-pool no longer listens: without a listener that error would end the
    // process. The failed query has already reported it to its caller.
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  async init(): Promise<void> {
    const client = await this.pool.connect();
    try {
      // Several processes may start at once; serialise the DDL.
      await client.query('SELECT pg_advisory_lock($1)', [APPEND_LOCK + 1]);
      await client.query(ddl);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [APPEND_LOCK + 1]).catch(() => undefined);
      client.release();
    }
  }

  async readStream(streamId: string): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM events WHERE stream_id = $1 ORDER BY revision', [streamId]);
    return rows.map(toEvent);
  }

  async readFromSnapshot(streamId: string, version: string): Promise<{ snapshot: Snapshot | null; events: StoredEvent[] }> {
    // One round trip: the snapshot (when its version matches) on every row, the events after it.
    // The outer join keeps one row when no event follows the snapshot.
    const { rows } = await this.pool.query<Partial<Row> & { snap_revision: number | null; snap_position: string | null; snap_state: unknown }>(
      `WITH s AS (SELECT revision, position, state FROM snapshots WHERE stream_id = $1 AND version = $2)
       SELECT s.revision AS snap_revision, s.position AS snap_position, s.state AS snap_state, e.*
         FROM (SELECT 1) AS one
         LEFT JOIN s ON true
         LEFT JOIN events e ON e.stream_id = $1 AND e.revision > coalesce(s.revision, -1)
        ORDER BY e.revision`,
      [streamId, version],
    );
    const first = rows[0];
    const snapshot =
      first && first.snap_revision !== null ? { revision: first.snap_revision, position: BigInt(first.snap_position!), state: first.snap_state } : null;
    return { snapshot, events: rows.filter((r) => r.position != null).map((r) => toEvent(r as Row)) };
  }

  async saveSnapshot(streamId: string, version: string, snapshot: Snapshot): Promise<void> {
    await this.pool.query(
      `INSERT INTO snapshots (stream_id, version, revision, position, state) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version, revision = excluded.revision,
         position = excluded.position, state = excluded.state, saved_at = now()
       WHERE snapshots.version <> excluded.version OR snapshots.revision < excluded.revision`,
      [streamId, version, snapshot.revision, snapshot.position.toString(), JSON.stringify(snapshot.state)],
    );
  }

  async appendToStream(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    // One statement, so one implicit transaction: the lock, the revision check, the rows and the
    // notification commit together or not at all (events_append in the DDL above).
    const { rows } = await this.pool.query<{ conflict: boolean; actual: number | null; last_revision: number | null; last_position: string | null }>(
      'SELECT * FROM events_append($1, $2, $3, $4, $5)',
      [
        streamId,
        expected === 'any' ? null : expected === 'no_stream' ? -1 : expected,
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e.data)),
        events.map((e) => JSON.stringify(e.metadata ?? {})),
      ],
    );
    const answer = rows[0]!;
    if (answer.conflict) throw new WrongExpectedRevisionError(streamId, expected, answer.actual ?? 'no_stream');
    return { revision: answer.last_revision!, position: BigInt(answer.last_position!) };
  }

  async deleteStream(streamId: string): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // The only rows the rule lets a DELETE remove: this stream's, in this transaction.
      await client.query("SELECT set_config('svc.delete_stream', $1, true)", [streamId]);
      await client.query('DELETE FROM events WHERE stream_id = $1', [streamId]);
      await client.query('DELETE FROM snapshots WHERE stream_id = $1', [streamId]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async readAll(after: bigint, limit: number): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM events WHERE position > $1 ORDER BY position LIMIT $2', [after.toString(), limit]);
    return rows.map(toEvent);
  }

  onAppended(listener: () => void): () => void {
    this.listeners.add(listener);
    if (!this.listener) void this.listen();
    return () => this.listeners.delete(listener);
  }

  /** A dedicated connection for LISTEN (pools hand connections around; a listener must stay put). */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url });
    this.listener = client;
    client.on('notification', () =>
      this.listeners.forEach((l) => {
        l();
      }),
    );
    client.on('error', () => {
      // Reconnect after a pause; subscribers poll meanwhile.
      this.listener = undefined;
      client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.listen(), 1000).unref();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch {
      client.emit('error', new Error('listen failed'));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listener?.end().catch(() => undefined);
    await this.pool.end();
  }
}
