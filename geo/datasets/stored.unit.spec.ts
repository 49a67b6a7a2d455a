import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalFileStore } from '../../platform/file-store.js';
import { localDataset, storedDataset } from './stored.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'stored-dataset-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const files = new LocalFileStore(dataDir);

describe('stored datasets', () => {
  it('stores a dataset by its name and opens it at its local path again', async () => {
    const local = { path: files.localPath('ws_a1', 'dataset/x.csv'), openOptions: ['X_POSSIBLE_NAMES=lon'], driver: 'CSV', warnings: ['w'] };
    const stored = storedDataset(files, 'ws_a1', local);
    expect(stored).toEqual({ path: path.join('dataset', 'x.csv'), open_options: ['X_POSSIBLE_NAMES=lon'], driver: 'CSV', assumed_crs: null });
    expect(await localDataset(files, 'ws_a1', stored)).toEqual({ ...local, warnings: [] });
  });
});
