"""Rows in Hilbert order with bounded memory: the curve's index and buckets spilled to disk."""

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def hilbert(x, y, order=16):
    """Hilbert curve index of integer grid cells (0 .. 2**order - 1), vectorised."""
    x = x.astype(np.uint32)
    y = y.astype(np.uint32)
    n = np.uint32((1 << order) - 1)
    d = np.zeros(x.shape, np.uint64)
    s = 1 << (order - 1)
    while s > 0:
        rx = (x & np.uint32(s)) > 0
        ry = (y & np.uint32(s)) > 0
        d += np.uint64(s * s) * ((np.uint64(3) * rx.astype(np.uint64)) ^ ry.astype(np.uint64))
        flip = ~ry & rx
        x = np.where(flip, n - x, x)
        y = np.where(flip, n - y, y)
        swap = ~ry
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        s >>= 1
    return d


class Buckets:
    """Rows spilled to Arrow IPC files by the top bits of their Hilbert key, read back in order.

    Memory stays bounded by one input batch plus one bucket (a bucket larger than BUCKET_BYTES is
    split again by the next bits when read), whatever the size of the layer. A bucket is held
    twice while it is sorted (read, then reordered): 16 MB buckets keep that near the size of a
    batch (48 MB ones held ~100 MB of the 1M-polygon write's peak).
    """

    BITS = 8
    BUCKET_BYTES = 16 * 1024 * 1024

    def __init__(self, folder):
        self.folder = folder
        self.writers = {}
        self.bytes = {}

    def add(self, batch, keys, shift=32 - BITS, prefix=""):
        bucket = (keys >> np.uint64(shift)).astype(np.int64) & ((1 << self.BITS) - 1)
        order = np.argsort(bucket, kind="stable")
        batch = batch.take(pa.array(order))
        bucket = bucket[order]
        cuts = np.flatnonzero(np.diff(bucket)) + 1
        for start, end in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(bucket)]])):
            name = f"{prefix}{int(bucket[start]):03d}"
            w = self.writers.get(name)
            if w is None:
                w = self.writers[name] = pa.ipc.new_stream(os.path.join(self.folder, name), batch.schema)
                self.bytes[name] = 0
            part = batch.slice(start, end - start)
            w.write_batch(part)
            self.bytes[name] += part.nbytes

    @staticmethod
    def close(writer):
        try:
            writer.close()
        except (pa.ArrowInvalid, OSError):
            pass  # closed already (a bucket split again)

    def sorted_tables(self, shift=32 - BITS, prefix=""):
        names = sorted(n for n in self.writers if n.startswith(prefix) and len(n) == len(prefix) + 3)
        for name in names:
            self.close(self.writers.pop(name))
            path = os.path.join(self.folder, name)
            if self.bytes.pop(name) > self.BUCKET_BYTES and shift > 0:
                # Too large to sort in memory: split by the next bits, streaming, then recurse.
                child = name + "."
                with pa.ipc.open_stream(path) as r:
                    for b in r:
                        self.add(b, b.column("__key").to_numpy(), max(0, shift - self.BITS), child)
                os.remove(path)
                for n in [n for n in self.writers if n.startswith(child)]:
                    self.close(self.writers[n])
                yield from self.sorted_tables(max(0, shift - self.BITS), child)
                continue
            with pa.ipc.open_stream(path) as r:
                t = r.read_all()
            os.remove(path)
            yield t.take(pc.sort_indices(t.column("__key")))
