import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonStepAvailable, runPythonStep } from '../../geo/sandbox/python-step.js';
import { bwrapPath, setSandboxStaging } from '../../geo/sandbox/sandbox.js';
import { readLayer, refusal, tempFolder, vectorFromCsv } from './support.js';

const hasBwrap = bwrapPath() !== null;
if (!hasBwrap) console.warn('python-step tests skipped: bubblewrap (bwrap) is missing on this machine');

describe.skipIf(!hasBwrap)('runPythonStep (bubblewrap)', { timeout: 60_000 }, () => {
  const tmp = tempFolder('python');
  const d = (n: string) => path.join(tmp.dir, n);
  let input: string;
  let server: Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    mkdirSync(d('in'));
    input = vectorFromCsv(d('in/parcels.gpkg'), 'id,area,wkt\n1,10.5,"POINT (7 46)"\n2,20,"POINT (8 47)"\n', ['-a_srs', 'EPSG:4326', '-nln', 'parcels']);
    // A server on the host's loopback: reachable from here, and it must not be from the sandbox.
    server = createServer((_req, res) => {
      hits++;
      res.end('secret');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    tmp.remove();
  });

  it('is available here', () => {
    expect(pythonStepAvailable()).toBe(true);
  });

  it('runs a geopandas script that adds a column', async () => {
    const script = [
      'import sys',
      'import geopandas as gpd',
      'df = gpd.read_file(sys.argv[1], layer="parcels")',
      'df["double_area"] = df["area"] * 2',
      'df.to_file(sys.argv[2], layer="parcels", driver="GPKG")',
      'print("rows:", len(df), "input:", sys.argv[1])',
    ].join('\n');
    const r = await runPythonStep({ script, filename: 'add_column.py' }, input, d('step1'));
    expect(r.stdout).toContain('rows: 2 input: /input/parcels.gpkg');
    const out = readLayer(r.outputPath, 'parcels');
    expect(out.features.map((f) => f.props.double_area)).toEqual([21, 40]);
    expect(out.features[0]!.wkt).toBe('POINT (7 46)');
  });

  it('has no network: a request to the host loopback fails', async () => {
    const script = [
      'import sys, urllib.request',
      'try:',
      `    urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=3).read()`,
      '    print("REACHED")',
      'except Exception as e:',
      '    print("blocked:", type(e).__name__)',
      'open(sys.argv[2], "w").write("x")',
    ].join('\n');
    const r = await runPythonStep({ script }, input, d('step2'));
    expect(r.stdout).toMatch(/blocked: URLError/);
    expect(r.stdout).not.toContain('REACHED');
    expect(hits).toBe(0);
  });

  it('kills an infinite loop at the timeout and reports it', async () => {
    const started = Date.now();
    const err = await refusal(
      runPythonStep({ script: 'print("looping", flush=True)\nwhile True:\n    pass\n' }, input, d('step3'), { timeoutMs: 1500 }),
      'invalid_transformation',
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(err.details).toMatchObject({ timed_out: true });
    expect(err.details.stdout).toContain('looping');
  });

  it('cannot write outside its folder (input read-only, host paths absent)', async () => {
    const escaped = d('escaped.txt');
    const script = [
      'import sys',
      `for target in [sys.argv[1], "/input/new.txt", "/usr/evil.txt", ${JSON.stringify(escaped)}]:`,
      '    try:',
      '        open(target, "a").write("x")',
      '        print("WROTE", target)',
      '    except OSError as e:',
      '        print("refused", target, type(e).__name__)',
      'sys.exit(3)',
    ].join('\n');
    const err = await refusal(runPythonStep({ script }, input, d('step4')), 'invalid_transformation');
    expect(err.details.exit_code).toBe(3);
    expect(err.details.stdout).not.toContain('WROTE');
    expect(String(err.details.stdout).match(/refused/g)).toHaveLength(4);
    expect(existsSync(escaped)).toBe(false);
    expect(readLayer(input, 'parcels').features).toHaveLength(2);
  });

  it('reports a failing script with its traceback, and a script that writes nothing', async () => {
    const err = await refusal(
      runPythonStep({ script: 'raise ValueError("bad data in row 7")', filename: 'fix.py' }, input, d('step5')),
      'invalid_transformation',
    );
    expect(err.details.exit_code).toBe(1);
    expect(err.details.stderr).toMatch(/File "\/step\/fix.py", line 1/);
    expect(err.message).toContain('ValueError: bad data in row 7');
    expect(JSON.stringify(err.details)).not.toContain(tmp.dir);

    const none = await refusal(runPythonStep({ script: 'print("done")' }, input, d('step6')), 'invalid_transformation');
    expect(none.message).toMatch(/without writing its output/);
    expect(none.details).toMatchObject({ exit_code: 0, timed_out: false });
  });

  it('stops a script at its memory limit', async () => {
    const err = await refusal(
      runPythonStep({ script: 'block = bytearray(1024 * 1024 * 1024)\nprint(len(block))' }, input, d('step8'), { memoryBytes: 256 * 1024 * 1024 }),
      'invalid_transformation',
    );
    expect(err.details.stderr).toMatch(/MemoryError/);
  });

  it('truncates a flood of output', async () => {
    const err = await refusal(
      runPythonStep({ script: 'import sys\nsys.stderr.write("e" * 500000)\nsys.exit(2)' }, input, d('step7'), { maxOutputBytes: 4096 }),
      'invalid_transformation',
    );
    expect(String(err.details.stderr).length).toBeLessThan(5000);
    expect(err.details.stderr).toMatch(/bytes omitted/);
  });

  it("runs as an unprivileged user, and its mounts name none of the service's folders", async () => {
    setSandboxStaging(d('staging'));
    const script = [
      'import os, shutil, sys',
      'print("uid", os.getuid(), "gid", os.getgid())',
      'print(open("/proc/self/mountinfo").read())',
      'shutil.copyfile(sys.argv[1], sys.argv[2])',
    ].join('\n');
    const stepDir = d('ws_secretname/tmp/preview-1/python');
    const r = await runPythonStep({ script }, input, stepDir);
    expect(r.stdout).toContain('uid 65534 gid 65534');
    // The step's own folder and the input's (a Workspace's, in the service) are bound under staging names.
    expect(r.stdout).toContain(' /step ');
    expect(r.stdout).not.toContain('ws_secretname');
    expect(r.stdout).not.toContain(path.dirname(input));
    // Its folder came back to where the caller put it, output included; the staging is empty again.
    expect(existsSync(r.outputPath)).toBe(true);
    expect(r.outputPath.startsWith(stepDir)).toBe(true);
    expect(readdirSync(d('staging'))).toEqual([]);
  });
});
