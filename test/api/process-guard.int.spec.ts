import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedirectChain, type RedirectChain } from '../servers/http/redirects.js';
import { until } from '../support/until.js';

/*
 * Issue 32, finding 2, the second line: a dependency that throws where nothing can catch it (here
 * node-fetch 3.3.2 itself, on a 307 → 302 chain, called directly) does not end a process that
 * installed platform/process-guard.ts, as the API and the worker do; an exception from the
 * service's own code still does (exit 1, and npm start restarts the process).
 */

interface Guarded {
  child: ChildProcess;
  output: () => string;
  get(path: string): Promise<string>;
  exited: Promise<number | null>;
}

async function startGuarded(): Promise<Guarded> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/guarded-process.ts'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d;
      const m = /port (\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (output += d));
    void exited.then((code) => reject(new Error(`the guarded process exited (${code}) before listening:\n${output}`)));
  });
  return { child, output: () => output, exited, get: (path) => fetch(`http://127.0.0.1:${port}${path}`).then((r) => r.text()) };
}

describe('the process guard (platform/process-guard.ts)', () => {
  let chain: RedirectChain;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    chain = await startRedirectChain();
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await chain?.stop();
  });

  it('keeps the process up when a dependency throws in one of its callbacks, and logs which one', async () => {
    const p = await startGuarded();
    children.push(p.child);
    expect(await p.get(`/library?chain=${encodeURIComponent(`${chain.url}/token`)}`)).toBe('sent');
    // Waits on the condition: the log line the guard writes once node-fetch has thrown.
    await until('the guard to log the throw', () => p.output().includes('threw where nothing can catch it'), 10_000, 50);
    expect(p.output()).toContain('"dependency":"node-fetch"');
    expect(p.output()).toContain("Cannot read properties of undefined (reading 'body')");
    expect(chain.received.map((r) => r.method)).toEqual(['POST', 'POST']);
    expect(await p.get('/')).toBe('up');
    expect(p.child.exitCode).toBeNull();
  });

  it('still ends the process on an exception of its own code', async () => {
    const p = await startGuarded();
    children.push(p.child);
    expect(await p.get('/ours')).toBe('thrown');
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('a mistake of our own');
    expect(p.output()).toContain('the process stops');
  });
});
