/**
 * The event store port. Every aggregate (job, recipe, user, token …) is one stream; the write
 * side appends with an expected revision, the read side follows the global order with readAll.
 * Two adapters implement it (PostgreSQL, KurrentDB) and pass one contract suite.
 */
export interface NewEvent {
  type: string;
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface StoredEvent {
  streamId: string;
  /** 0-based position of the event in its stream. */
  revision: number;
  /** Global order across all streams; strictly increasing, gap-tolerant. */
  position: bigint;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

/** `no_stream`: the stream must not exist; a number: the revision of the stream's last event. */
export type ExpectedRevision = 'no_stream' | 'any' | number;

export interface AppendResult {
  /** Revision of the last appended event. */
  revision: number;
  /** Global position of the last appended event; projections are caught up once they pass it. */
  position: bigint;
}

/** A stream's folded state as of one of its events, so that a long stream is not read from its start. */
export interface Snapshot {
  /** Revision and global position of the last event folded into `state`. */
  revision: number;
  position: bigint;
  state: unknown;
}

export interface EventStore {
  readonly kind: 'postgres' | 'kurrentdb';
  init(): Promise<void>;
  readStream(streamId: string): Promise<StoredEvent[]>;
  /**
   * The stream's snapshot saved under `version` (null when there is none, or only one of another
   * version) and the events after it, in one read. A store that keeps no snapshots answers null
   * and the whole stream.
   */
  readFromSnapshot(streamId: string, version: string): Promise<{ snapshot: Snapshot | null; events: StoredEvent[] }>;
  /** Keeps `snapshot` for the stream under `version`, unless a later one is kept already. */
  saveSnapshot(streamId: string, version: string, snapshot: Snapshot): Promise<void>;
  appendToStream(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /**
   * Removes a stream's events (and its snapshot): only for retention (application/run-retention.ts
   * prunes the Runs past SVC_RUN_RETENTION_DAYS). The store is otherwise append-only. A stream
   * that does not exist is nothing to do.
   */
  deleteStream(streamId: string): Promise<void>;
  /** Events with position > `after`, in global order, at most `limit` of them. */
  readAll(after: bigint, limit: number): Promise<StoredEvent[]>;
  /** A hint that new events may exist; subscribers still poll as a safety net. */
  onAppended(listener: () => void): () => void;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamId} is at ${actual}, expected ${expected}`);
    this.name = 'WrongExpectedRevisionError';
  }
}
