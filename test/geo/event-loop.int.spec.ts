import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset } from '../../geo/datasets/convert.js';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { applyPipeline } from '../../geo/operations/pipeline.js';
import { manyPointsGpkg } from '../support/fixtures.js';
import { tempFolder } from './support.js';

/*
 * Issue 22: no GDAL call holds the event loop. A big write's finalisation (a GeoPackage's R-tree,
 * FlatGeobuf's sorted index, which GDAL builds when the output is closed) took 3 to 10 s on the
 * event loop for these 150,000 points; the worker's heartbeats, and every other Run and request of
 * the process, waited that long. The loop's longest stall is measured around each write.
 */

const POINTS = 150_000;

describe('big writes leave the event loop free', { timeout: 240_000 }, () => {
  const tmp = tempFolder('event-loop');
  let big: string;

  beforeAll(() => {
    big = manyPointsGpkg(tmp.dir, POINTS);
  });
  afterAll(() => tmp.remove());

  /** Runs work with the event loop's delay histogram on; answers the longest stall in ms. */
  async function longestStall(work: () => Promise<unknown>): Promise<number> {
    const histogram = monitorEventLoopDelay({ resolution: 20 });
    histogram.enable();
    try {
      await work();
      // One more turn of the loop, so a stall at the very end is sampled too (the histogram samples
      // by time: this is a measurement's window, not a wait for something).
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      histogram.disable();
    }
    return histogram.max / 1e6;
  }

  for (const format of ['GPKG', 'FlatGeobuf']) {
    it(`converting ${POINTS} points to ${format} never blocks the loop for a second, and reports progress`, async () => {
      const seen: { bytes_written: number; percent?: number }[] = [];
      let result: Awaited<ReturnType<typeof convertDataset>> | undefined;
      const stall = await longestStall(async () => {
        result = await convertDataset(datasetAt(big), { outputFormat: format }, path.join(tmp.dir, `out-${format}`), { progress: (p) => seen.push(p) });
      });
      expect(result).toMatchObject({ format, layers: ['points'] });
      expect(result!.size).toBeGreaterThan(1_000_000);
      expect(stall).toBeLessThan(1_000);
      // The last report is the finished file.
      expect(seen.at(-1)).toMatchObject({ percent: 100 });
      expect(seen.at(-1)!.bytes_written).toBeGreaterThan(1_000_000);
    });
  }

  it(`a pipeline over ${POINTS} points (an operation, the other layers copied) never blocks the loop for a second`, async () => {
    let layers: string[] = [];
    const stall = await longestStall(async () => {
      ({ layers } = await applyPipeline(
        datasetAt(big),
        { operations: [{ type: 'rename_column', from: 'name', to: 'label' }] },
        path.join(tmp.dir, 'pipeline'),
      ));
    });
    expect(layers).toEqual(['points']);
    expect(stall).toBeLessThan(1_000);
  });
});
