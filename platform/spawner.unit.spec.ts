import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type Spawned, spawnProcess } from './spawner.js';

const env = { PATH: '/usr/bin:/bin' };

/** Runs a child to its end: its stdout as text, and how it ended. */
function finished(child: Spawned): Promise<{ out: string; bytes: number; code: number | null; signal: string | null }> {
  const chunks: Buffer[] = [];
  child.stdout?.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code: number | null, signal: string | null) => {
      const all = Buffer.concat(chunks);
      resolve({ out: all.toString('utf8'), bytes: all.length, code, signal });
    });
  });
}

/** Whether a process runs (a zombie no parent reaped yet has ended). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('spawnProcess', () => {
  afterEach(() => {
    delete process.env.SVC_SPAWN_HELPER;
  });

  it('starts children from a helper process, not from this one (whose fork is the expensive one), with their output and exit code', async () => {
    const got = await finished(await spawnProcess('sh', ['-c', 'echo "$PPID"; echo oops >&2; exit 3'], { env, stdout: 'pipe', stderr: 'pipe' }));
    expect(got.code).toBe(3);
    const parent = Number(got.out.trim());
    expect(parent).toBeGreaterThan(0);
    expect(parent).not.toBe(process.pid);
    // The same helper serves the next child.
    const again = await finished(await spawnProcess('sh', ['-c', 'echo "$PPID"'], { env, stdout: 'pipe', stderr: 'ignore' }));
    expect(Number(again.out.trim())).toBe(parent);
  });

  it('passes a large output through whole (the child waits while the channel is full)', async () => {
    const got = await finished(await spawnProcess('head', ['-c', '20000000', '/dev/zero'], { env, stdout: 'pipe', stderr: 'ignore' }));
    expect(got.code).toBe(0);
    expect(got.bytes).toBe(20_000_000);
  });

  it('kills a detached child with everything it started (its process group)', async () => {
    const child = await spawnProcess('sh', ['-c', 'sleep 30 & sleep 30; echo never'], { env, detached: true, stdout: 'pipe', stderr: 'ignore' });
    const done = finished(child);
    setTimeout(() => child.kill('SIGKILL', { group: true }), 200);
    const started = Date.now();
    const got = await done;
    expect(got.signal).toBe('SIGKILL');
    expect(got.out).toBe('');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('reports a command that cannot start as an error', async () => {
    const child = await spawnProcess('/nonexistent/tool', [], { env, stdout: 'ignore', stderr: 'ignore' });
    await expect(finished(child)).rejects.toThrow(/ENOENT/);
  });

  it('kills the children of a helper that died, and starts a new helper for the next', async () => {
    const child = await spawnProcess('sh', ['-c', 'echo "$PPID $$"; exec sleep 30'], { env, stdout: 'pipe', stderr: 'ignore' });
    const [pid, own] = await new Promise<number[]>((resolve) => child.stdout!.once('data', (c: Buffer) => resolve(c.toString().trim().split(' ').map(Number))));
    const done = finished(child);
    process.kill(pid!, 'SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    // Not left running, orphaned.
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(own!)).toBe(false);
    const next = await finished(await spawnProcess('sh', ['-c', 'echo "$PPID"'], { env, stdout: 'pipe', stderr: 'ignore' }));
    expect(Number(next.out.trim())).not.toBe(pid);
    expect(Number(next.out.trim())).not.toBe(process.pid);
  });

  it('does not keep a process alive once its children ended, one of them unable to start', () => {
    const script = `import { spawnProcess } from ${JSON.stringify(new URL('./spawner.ts', import.meta.url).pathname)};
      const env = { PATH: '/usr/bin:/bin' };
      const ok = await spawnProcess('true', [], { env, stdout: 'ignore', stderr: 'ignore' });
      await new Promise((resolve) => ok.once('close', resolve));
      const bad = await spawnProcess('/nonexistent/tool', [], { env, stdout: 'ignore', stderr: 'ignore' });
      await new Promise((resolve) => bad.once('error', resolve));
      console.log('done');`;
    const started = Date.now();
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(out.trim()).toBe('done');
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('starts children itself when SVC_SPAWN_HELPER=0', async () => {
    process.env.SVC_SPAWN_HELPER = '0';
    const got = await finished(await spawnProcess('sh', ['-c', 'echo "$PPID"'], { env, stdout: 'pipe', stderr: 'ignore' }));
    expect(Number(got.out.trim())).toBe(process.pid);
  });
});
