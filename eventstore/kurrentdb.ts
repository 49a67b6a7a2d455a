import {
  ANY,
  END,
  FORWARDS,
  KurrentDBClient,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamSubscription,
} from '@kurrent/kurrentdb-client';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent, Snapshot, StoredEvent } from './port.js';
import { WrongExpectedRevisionError } from './port.js';

/**
 * KurrentDB (EventStoreDB's successor) through its maintained gRPC client, chosen with
 * SVC_EVENTSTORE_URL=esdb://… or kurrentdb://…. The global position is the commit position of
 * $all; system events are filtered out.
 */
export class KurrentEventStore implements EventStore {
  readonly kind = 'kurrentdb' as const;
  private readonly client: KurrentDBClient;
  private subscription: AllStreamSubscription | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(url: string) {
    this.client = KurrentDBClient.connectionString(url);
  }

  async init(): Promise<void> {
    // Fails fast with a clear error when the server is unreachable.
    for await (const _ of this.client.readAll({ maxCount: 1, filter: excludeSystemEvents() })) break;
  }

  async readStream(streamId: string): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(streamId, { fromRevision: START, direction: FORWARDS })) {
        if (resolved.event) out.push(this.toStored(resolved.event, resolved.commitPosition));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return out;
  }

  /**
   * No snapshots here: KurrentDB reads a stream server-side, and a snapshot stream of our own
   * would reach every projector through $all. A long stream is read whole (docs/decisions.md).
   */
  async readFromSnapshot(streamId: string): Promise<{ snapshot: Snapshot | null; events: StoredEvent[] }> {
    return { snapshot: null, events: await this.readStream(streamId) };
  }

  async saveSnapshot(): Promise<void> {}

  async appendToStream(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const streamState = expected === 'no_stream' ? NO_STREAM : expected === 'any' ? ANY : BigInt(expected);
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) => jsonEvent({ type: e.type, data: e.data, metadata: e.metadata ?? {} })),
        { streamState },
      );
      return { revision: Number(result.nextExpectedRevision), position: result.position?.commit ?? 0n };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = typeof error.actualState === 'bigint' ? Number(error.actualState) : 'no_stream';
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      }
      throw error;
    }
  }

  /** A soft delete: the stream reads as empty at once, and the server's scavenge reclaims its events. */
  async deleteStream(streamId: string): Promise<void> {
    try {
      await this.client.deleteStream(streamId);
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
  }

  async readAll(after: bigint, limit: number): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    const fromPosition = after === 0n ? START : { commit: after, prepare: after };
    for await (const resolved of this.client.readAll({
      fromPosition,
      maxCount: limit + 1,
      direction: FORWARDS,
      filter: excludeSystemEvents(),
    })) {
      const event = resolved.event;
      if (!event?.position || event.position.commit <= after) continue;
      out.push(this.toStored(event, event.position.commit));
      if (out.length === limit) break;
    }
    return out;
  }

  onAppended(listener: () => void): () => void {
    this.listeners.add(listener);
    if (!this.subscription) {
      this.subscription = this.client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() });
      this.subscription.on('data', () =>
        this.listeners.forEach((l) => {
          l();
        }),
      );
      this.subscription.on('error', () => {
        this.subscription = undefined; // polling covers the gap; the next onAppended resubscribes
      });
    }
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    await this.subscription?.unsubscribe().catch(() => undefined);
    await this.client.dispose();
  }

  private toStored(
    event: { streamId: string; revision: bigint; type: string; data: unknown; metadata?: unknown; created: Date },
    position: bigint | undefined,
  ): StoredEvent {
    return {
      streamId: event.streamId,
      revision: Number(event.revision),
      position: position ?? 0n,
      type: event.type,
      data: event.data as Record<string, unknown>,
      metadata: (event.metadata ?? {}) as Record<string, unknown>,
      createdAt: event.created,
    };
  }
}
