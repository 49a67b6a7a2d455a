import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalFileStore, areaOf } from './file-store.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'file-store-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const files = new LocalFileStore(dataDir);

describe('LocalFileStore', () => {
  it("keeps a Workspace's and a Run's files in their folders under the data folder", async () => {
    expect(await files.put('ws_a1', 'original/x.csv', Readable.from(['a,b\n1,2\n']))).toBe(8);
    expect(readFileSync(path.join(dataDir, 'workspaces', 'ws_a1', 'original', 'x.csv'), 'utf8')).toBe('a,b\n1,2\n');
    const dir = await files.workDir('run_b2', 'extract');
    expect(dir).toBe(path.join(dataDir, 'runs', 'run_b2', 'extract'));
    const { body, size } = await files.get('ws_a1', 'original/x.csv');
    expect(size).toBe(8);
    expect(Buffer.concat(await body.toArray()).toString()).toBe('a,b\n1,2\n');
  });

  it("refuses ids of neither kind and names that leave the owner's folder", () => {
    expect(() => areaOf('../ws_a1')).toThrow(/not the id/);
    expect(() => files.localPath('ws_a1', '../ws_other/x')).toThrow(/escapes/);
    expect(() => files.localPath('run_b2', '/etc/passwd')).toThrow(/escapes/);
  });

  it('empties a work folder that an earlier attempt left behind; local() and publish() copy nothing', async () => {
    const dir = await files.workDir('run_b2', 'convert');
    writeFileSync(path.join(dir, 'left.txt'), 'x');
    await files.publish('run_b2', 'convert');
    expect(await files.local('run_b2', 'convert/left.txt')).toBe(path.join(dir, 'left.txt'));
    await files.workDir('run_b2', 'convert');
    expect(() => readFileSync(path.join(dir, 'left.txt'))).toThrow();
  });

  it("lists the owners of one area and removes one file or all of an owner's", async () => {
    await files.workDir('ws_c3', 'tmp/p');
    await files.workDir('ws_c3', 'tmp/q');
    await files.remove('ws_c3', 'tmp/p');
    await expect(files.workDir('ws_c3', 'tmp/q')).resolves.toBe(path.join(dataDir, 'workspaces', 'ws_c3', 'tmp', 'q'));
    expect((await files.list('workspaces')).map((o) => o.owner).sort()).toEqual(['ws_a1', 'ws_c3']);
    expect((await files.list('runs')).map((o) => o.owner)).toEqual(['run_b2']);
    await files.remove('ws_c3');
    expect((await files.list('workspaces')).map((o) => o.owner)).toEqual(['ws_a1']);
  });
});
