import { existsSync, statSync } from 'node:fs';
import { link, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { bwrapPath, runSandboxed, SandboxUnavailable, sandboxStaging } from './sandbox.js';

/** Debian's interpreter: it has python3-gdal, shapely, pyproj and geopandas (pyenv shims don't). */
export const PYTHON = '/usr/bin/python3';

export interface PythonScript {
  /** The script's source text. */
  script: string;
  /** The name it was stored under (shown in tracebacks); defaults to script.py. */
  filename?: string;
}

export interface PythonStepOptions {
  /** Default 60 s. */
  timeoutMs?: number;
  /** Default 2 GiB. */
  memoryBytes?: number;
  /** Bytes of stdout/stderr kept; default 64 KiB. */
  maxOutputBytes?: number;
  /** Output file name, whose extension tells the script the expected format; default output.gpkg. */
  outputName?: string;
  /** Stops the script (a preview's deadline, a closed request); the step then fails with the signal's reason. */
  signal?: AbortSignal;
}

export interface PythonStepResult {
  /** The file the script wrote, on the server (inside stepDir). */
  outputPath: string;
  stdout: string;
  stderr: string;
}

/** Whether this server can run Python steps (they never run unsandboxed). */
export function pythonStepAvailable(): boolean {
  return bwrapPath() !== null && existsSync(PYTHON);
}

function scriptName(filename: string | undefined): string {
  const base = (filename ?? 'script.py').split(/[\\/]/).pop() ?? 'script.py';
  const cleaned = base.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return cleaned.endsWith('.py') ? cleaned : `${cleaned || 'script'}.py`;
}

/**
 * The step's folder and input under a staging folder of neutral names (geo/sandbox/sandbox.ts,
 * sandboxStaging): the folder moved there (a rename) and back, the input hard-linked, so nothing
 * is copied. Where that cannot be (another filesystem), the paths stay as they are.
 */
async function stage(stepDir: string, inputPath: string): Promise<{ step: string; input: string; restore: () => Promise<void> }> {
  const as = { step: path.resolve(stepDir), input: path.resolve(inputPath), restore: async () => undefined };
  let dir: string;
  try {
    await mkdir(sandboxStaging(), { recursive: true });
    dir = await mkdtemp(path.join(sandboxStaging(), 'py-'));
  } catch {
    return as;
  }
  const step = path.join(dir, 'step');
  try {
    await rename(as.step, step);
  } catch {
    await rm(dir, { recursive: true, force: true });
    return as;
  }
  let input = as.input;
  if (!(await stat(as.input)).isDirectory()) {
    const linked = path.join(dir, 'input');
    if (
      await link(as.input, linked).then(
        () => true,
        () => false,
      )
    )
      input = linked;
  }
  return {
    step,
    input,
    restore: async () => {
      await rename(step, as.step);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `python3 script input output` in the sandbox. The script sees its input read-only under
 * /input and writes its output under /step (the only writable folder, backed by stepDir); it has
 * no network and an empty environment. A non-zero exit, a timeout or a missing output is an
 * invalid_transformation carrying the exit code and the (truncated) stdout and stderr.
 */
export async function runPythonStep(script: PythonScript, inputPath: string, stepDir: string, options: PythonStepOptions = {}): Promise<PythonStepResult> {
  if (!pythonStepAvailable()) {
    throw new DomainError('invalid_transformation', 'Python steps are not available on this server (bubblewrap is not installed)', {});
  }
  await mkdir(stepDir, { recursive: true });
  const name = scriptName(script.filename);
  await writeFile(path.join(stepDir, name), script.script, 'utf8');
  const outputName = options.outputName ?? 'output.gpkg';
  const inputName = path.basename(inputPath);
  const inside = { script: `/step/${name}`, input: `/input/${inputName}`, output: `/step/${outputName}` };
  const timeoutMs = options.timeoutMs ?? 60_000;
  const staged = await stage(stepDir, inputPath);
  let result;
  try {
    result = await runSandboxed([PYTHON, '-I', '-u', inside.script, inside.input, inside.output], {
      mounts: [
        { host: staged.step, inside: '/step', writable: true },
        { host: staged.input, inside: inside.input },
      ],
      cwd: '/step',
      timeoutMs,
      ...(options.memoryBytes ? { memoryBytes: options.memoryBytes } : {}),
      ...(options.maxOutputBytes ? { maxOutputBytes: options.maxOutputBytes } : {}),
      env: { MPLCONFIGDIR: '/tmp', PYTHONIOENCODING: 'utf-8' },
      fallback: 'refuse',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    if (err instanceof SandboxUnavailable)
      throw new DomainError('invalid_transformation', 'Python steps are not available on this server: the sandbox cannot start', {});
    throw err;
  } finally {
    await staged.restore();
  }
  if (options.signal?.aborted) throw options.signal.reason ?? new DomainError('invalid_parameter', 'The request was cancelled');
  const details = { exit_code: result.exitCode, stdout: result.stdout, stderr: result.stderr, timed_out: result.timedOut };
  if (result.timedOut) {
    throw new DomainError('invalid_transformation', `The Python step was stopped after ${Math.round(timeoutMs / 1000)} s`, details);
  }
  if (result.exitCode !== 0) {
    const last = result.stderr.trim().split('\n').pop() ?? '';
    throw new DomainError(
      'invalid_transformation',
      `The Python step failed (exit code ${result.exitCode ?? result.signal})${last ? `: ${last.slice(0, 300)}` : ''}`,
      details,
    );
  }
  const outputPath = path.join(stepDir, outputName);
  if (!existsSync(outputPath) || (statSync(outputPath).isFile() && statSync(outputPath).size === 0)) {
    throw new DomainError('invalid_transformation', `The Python step ended without writing its output (the second argument, ${inside.output})`, details);
  }
  return { outputPath, stdout: result.stdout, stderr: result.stderr };
}
