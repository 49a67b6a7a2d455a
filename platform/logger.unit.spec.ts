import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BufferedLogDestination, createAccessLog } from './logger.js';

const dir = mkdtempSync(path.join(tmpdir(), 'logger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('BufferedLogDestination', () => {
  it('writes whole lines in order, in chunks, and what is pending once flushed', async () => {
    const file = path.join(dir, 'chunks.log');
    const fd = openSync(file, 'w');
    const out = new BufferedLogDestination(fd, 1024);
    const lines = Array.from({ length: 2000 }, (_, i) => `{"n":${i},"text":"${'é'.repeat(i % 7)}"}\n`);
    for (const line of lines) out.write(line);
    out.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    out.flushSync();
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('writes what is pending when the process exits, without waiting for a timer', () => {
    const script = `
      import { BufferedLogDestination } from ${JSON.stringify(path.resolve('platform/logger.ts'))};
      const out = new BufferedLogDestination(1);
      out.write('{"last":"line"}\\n');
      process.exit(0);`;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(output).toBe('{"last":"line"}\n');
  });

  it('finishes partial writes into a pipe whose reader is slow, and loses nothing', async () => {
    // A pipe holds 64 KiB: 4 MiB of lines must wait for the reader, in pieces.
    const child = spawn('sh', ['-c', 'sleep 0.3; cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    const fd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const out = new BufferedLogDestination(fd);
    const line = `${JSON.stringify({ filler: 'x'.repeat(1000) })}\n`;
    for (let i = 0; i < 4096; i++) out.write(line);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    child.stdin.end();
    await new Promise((resolve) => child.once('close', resolve));
    expect(Buffer.concat(chunks).toString()).toBe(line.repeat(4096));
  });
});

describe('createAccessLog', () => {
  it('writes one JSON line in pino’s shape, with the URL escaped', () => {
    const written: string[] = [];
    const access = createAccessLog('info', { write: (s: string) => written.push(s) } as never)!;
    access({ reqId: 'req-1', method: 'GET', url: '/api/v1/x?q="a"\\b\u0001é', status: 404, ms: 1.5 });
    expect(written).toHaveLength(1);
    expect(written[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(written[0]!)).toMatchObject({
      level: 30,
      time: expect.any(Number),
      pid: process.pid,
      hostname: expect.any(String),
      name: 'access',
      reqId: 'req-1',
      method: 'GET',
      url: '/api/v1/x?q="a"\\b\u0001é',
      status: 404,
      ms: 1.5,
      msg: 'request',
    });
  });

  it('is off at levels above info', () => {
    expect(createAccessLog('warn')).toBeNull();
    expect(createAccessLog('silent')).toBeNull();
    expect(createAccessLog('debug')).not.toBeNull();
  });
});
