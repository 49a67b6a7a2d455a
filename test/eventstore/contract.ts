import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '../../eventstore/port.js';
import { WrongExpectedRevisionError } from '../../eventstore/port.js';
import { until } from '../support/until.js';

const stream = (name: string) => `${name}-${randomBytes(5).toString('hex')}`;
const event = (n: number) => ({ type: 'Happened', data: { n } });

/**
 * The behaviour every event store adapter must have. `open` creates an adapter on a store that
 * may already hold other events; `openMany` gives independent connections for concurrency.
 */
export function eventStoreContract(name: string, open: () => Promise<EventStore>, cleanup: () => Promise<void> = async () => {}) {
  describe(`event store contract: ${name}`, () => {
    let sut: EventStore;
    beforeAll(async () => {
      sut = await open();
      await sut.init();
    });
    afterAll(async () => {
      await sut?.close();
      await cleanup();
    });

    it('appends to a new stream and reads it back in order', async () => {
      const id = stream('order');
      const result = await sut.appendToStream(id, [event(1), event(2), event(3)], 'no_stream');
      expect(result.revision).toBe(2);
      const read = await sut.readStream(id);
      expect(read.map((e) => [e.revision, e.data.n])).toEqual([
        [0, 1],
        [1, 2],
        [2, 3],
      ]);
      expect(read.every((e) => e.streamId === id && e.type === 'Happened')).toBe(true);
      expect(read[2]!.position).toBe(result.position);
    });

    it('reads an unknown stream as empty', async () => {
      expect(await sut.readStream(stream('missing'))).toEqual([]);
    });

    it('deletes one stream for retention, leaving the others, and nothing else can delete', async () => {
      const gone = stream('pruned');
      const kept = stream('kept');
      await sut.appendToStream(gone, [event(1), event(2)], 'no_stream');
      await sut.appendToStream(kept, [event(3)], 'no_stream');
      await sut.deleteStream(gone);
      expect(await sut.readStream(gone)).toEqual([]);
      expect((await sut.readStream(kept)).map((e) => e.data.n)).toEqual([3]);
      const all = await sut.readAll(0n, 100_000);
      expect(all.some((e) => e.streamId === gone)).toBe(false);
      // A stream that is not there is nothing to do.
      await sut.deleteStream(stream('never'));
    });

    it('refuses an append with a stale expected revision', async () => {
      const id = stream('occ');
      await sut.appendToStream(id, [event(1)], 'no_stream');
      await sut.appendToStream(id, [event(2)], 0);
      await expect(sut.appendToStream(id, [event(3)], 0)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await expect(sut.appendToStream(id, [event(3)], 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect((await sut.readStream(id)).length).toBe(2);
    });

    it('lets exactly one of two racing writers win', async () => {
      const id = stream('race');
      await sut.appendToStream(id, [event(0)], 'no_stream');
      const results = await Promise.allSettled([sut.appendToStream(id, [event(1)], 0), sut.appendToStream(id, [event(2)], 0)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof WrongExpectedRevisionError)).toHaveLength(1);
    });

    it('orders readAll by strictly increasing position and pages with `after`', async () => {
      const id = stream('all');
      const { position } = await sut.appendToStream(id, [event(1), event(2)], 'no_stream');
      const page = await sut.readAll(position - 1n, 10);
      expect(page[0]!.position).toBe(position);
      const everything = await readEverything(sut);
      for (let i = 1; i < everything.length; i++) expect(everything[i]!.position > everything[i - 1]!.position).toBe(true);
      expect(everything.filter((e) => e.streamId === id).map((e) => e.data.n)).toEqual([1, 2]);
    });

    it('gives a follower every event exactly once, in order, under concurrent appends from several connections', async () => {
      const writers = await Promise.all([open(), open(), open(), open()]);
      await Promise.all(writers.map((w) => w.init()));
      const prefix = stream('conc');
      const start = (await readEverything(sut)).at(-1)?.position ?? 0n;
      const seen: { streamId: string; n: number; position: bigint }[] = [];
      let done = false;
      // A follower that reads while the writers write: the case where a plain sequence skips events.
      const follower = (async () => {
        let after = start;
        while (true) {
          // Whether the writers had finished before this read was sent: an empty answer to a read
          // sent earlier may predate the last append's commit.
          const finished = done;
          const batch = await sut.readAll(after, 50);
          for (const e of batch) {
            if (e.streamId.startsWith(prefix)) seen.push({ streamId: e.streamId, n: e.data.n as number, position: e.position });
            after = e.position;
          }
          if (batch.length === 0) {
            if (finished) break;
            // A follower's idle pace between reads while the writers work, not a wait for something.
            await new Promise((r) => setTimeout(r, 2));
          }
        }
      })();
      const perWriter = 40;
      await Promise.all(
        writers.map(async (w, wi) => {
          for (let i = 0; i < perWriter; i++) {
            await w.appendToStream(`${prefix}-w${wi}-${i % 5}`, [event(i)], 'any');
          }
        }),
      );
      done = true;
      await follower;
      await Promise.all(writers.map((w) => w.close()));

      expect(seen).toHaveLength(writers.length * perWriter);
      const positions = seen.map((s) => s.position);
      expect(new Set(positions.map(String)).size).toBe(positions.length);
      for (let i = 1; i < positions.length; i++) expect(positions[i]! > positions[i - 1]!).toBe(true);
      for (let wi = 0; wi < writers.length; wi++) {
        const mine = seen.filter((s) => s.streamId.startsWith(`${prefix}-w${wi}-`)).map((s) => s.n);
        expect(mine).toEqual([...Array(perWriter).keys()]);
      }
    });

    it('reads from a snapshot only the events after it, or the whole stream when it keeps none', async () => {
      const id = stream('snap');
      const appended = await sut.appendToStream(id, [event(1), event(2), event(3), event(4), event(5)], 'no_stream');
      const third = (await sut.readStream(id))[2]!;
      await sut.saveSnapshot(id, 'v1', { revision: 2, position: third.position, state: { sum: 6 } });
      // An older snapshot never replaces a later one.
      await sut.saveSnapshot(id, 'v1', { revision: 1, position: third.position - 1n, state: { sum: 3 } });
      const { snapshot, events } = await sut.readFromSnapshot(id, 'v1');
      if (snapshot) {
        expect(snapshot).toEqual({ revision: 2, position: third.position, state: { sum: 6 } });
        expect(events.map((e) => e.data.n)).toEqual([4, 5]);
      } else {
        expect(events.map((e) => e.data.n)).toEqual([1, 2, 3, 4, 5]);
      }
      expect(events.at(-1)!.position).toBe(appended.position);
      // A snapshot of another version (folded by other code) is not used.
      const other = await sut.readFromSnapshot(id, 'v2');
      expect(other.snapshot).toBeNull();
      expect(other.events.map((e) => e.data.n)).toEqual([1, 2, 3, 4, 5]);
      // A snapshot of the last event: no events after it, the snapshot still there.
      await sut.saveSnapshot(id, 'v1', { revision: 4, position: appended.position, state: { sum: 15 } });
      const latest = await sut.readFromSnapshot(id, 'v1');
      if (latest.snapshot) expect([latest.snapshot.revision, latest.events.length]).toEqual([4, 0]);
      expect((await sut.readFromSnapshot(stream('none'), 'v1')).events).toEqual([]);
    });

    it('wakes listeners when something is appended', async () => {
      let woken = 0;
      const stop = sut.onAppended(() => (woken += 1));
      // The listener connects in the background: append until one append has woken it.
      await until(
        'the listener woken by an append',
        async () => {
          await sut.appendToStream(stream('wake'), [event(1)], 'no_stream');
          return woken > 0;
        },
        10_000,
        200,
      ).catch(() => undefined);
      stop();
      expect(woken).toBeGreaterThan(0);
    });
  });
}

async function readEverything(store: EventStore) {
  const out = [];
  let after = 0n;
  while (true) {
    const batch = await store.readAll(after, 500);
    if (batch.length === 0) return out;
    out.push(...batch);
    after = batch.at(-1)!.position;
  }
}
