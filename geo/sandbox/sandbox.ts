import { spawnProcess } from '../../platform/spawner.js';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/*
 * Runs untrusted work (a user's Python script, GDAL over user SQL) in bubblewrap: every namespace
 * unshared (so no network at all), a read-only /usr, only the step's folders bound, an empty
 * environment (no secrets reach it), a wall-clock timeout that kills the whole process tree, and
 * address-space / file-size limits set with prlimit.
 */

export interface Mount {
  /** Folder or file on the server. */
  host: string;
  /** Where the sandbox sees it. */
  inside: string;
  writable?: boolean;
}

export interface SandboxOptions {
  mounts: Mount[];
  /** Working directory inside the sandbox. */
  cwd?: string;
  /** Wall-clock limit; default 60 s. */
  timeoutMs?: number;
  /** Address-space limit (RLIMIT_AS); default 2 GiB. */
  memoryBytes?: number;
  /** Largest file the process may write (RLIMIT_FSIZE); default 8 GiB. */
  maxFileBytes?: number;
  /** Bytes of stdout and of stderr kept (head and tail); default 64 KiB. */
  maxOutputBytes?: number;
  /** Extra environment variables (the environment starts empty). */
  env?: Record<string, string>;
  /** More variables when it runs without the sandbox (fallback `direct`): what stands in for the missing walls. */
  directEnv?: Record<string, string>;
  /**
   * Without bubblewrap: `refuse` throws SandboxUnavailable; `direct` runs the command as a plain
   * child process (empty environment, limits and timeout still applied, host paths unchanged, so
   * mounts must use host === inside).
   */
  fallback?: 'refuse' | 'direct';
  /** Sees stdout as it arrives (a tool's progress), besides keeping it. */
  onStdout?: (chunk: string) => void;
  /** Kills the process tree when aborted (a cancelled step). */
  signal?: AbortSignal;
}

export interface SandboxResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  sandboxed: boolean;
}

export class SandboxUnavailable extends Error {
  constructor(reason = 'bubblewrap (bwrap) is not installed') {
    super(reason);
  }
}

const GiB = 1024 * 1024 * 1024;

function findExecutable(name: string): string | null {
  for (const dir of ['/usr/bin', '/bin', '/usr/local/bin']) {
    const p = `${dir}/${name}`;
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return null;
}

let bwrap: string | null | undefined;
/** Path of bwrap, or null when this server cannot sandbox. */
export function bwrapPath(): string | null {
  if (bwrap === undefined) bwrap = findExecutable('bwrap');
  return bwrap;
}

/** The parts of /etc that the dynamic linker, Python and GDAL read; never all of /etc. Looked up once per process. */
let etcBindArgs: string[] | undefined;
function etcBinds(): string[] {
  etcBindArgs ??= findEtcBinds();
  return etcBindArgs;
}

function findEtcBinds(): string[] {
  const wanted = ['alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'matplotlibrc', 'fonts', 'mime.types', 'gdal', 'proj'];
  let pythonDirs: string[] = [];
  try {
    pythonDirs = readdirSync('/etc').filter((n) => /^python3(\.\d+)?$/.test(n));
  } catch {
    // no /etc listing: keep the fixed list
  }
  const args: string[] = [];
  for (const name of [...wanted, ...pythonDirs]) {
    const p = `/etc/${name}`;
    if (existsSync(p)) args.push('--ro-bind', p, p);
  }
  return args;
}

/** A stream collector that keeps the first and last half of the budget, noting what it dropped. */
class Capped {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private dropped = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer) {
    const half = Math.floor(this.max / 2);
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    const merged = Buffer.concat([this.tail, chunk]);
    const keep = this.max - half;
    if (merged.length > keep) {
      this.dropped += merged.length - keep;
      this.tail = merged.subarray(merged.length - keep);
    } else this.tail = merged;
  }
  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = this.tail.toString('utf8');
    return this.dropped > 0 ? `${head}\n…[${this.dropped} bytes omitted]…\n${tail}` : head + tail;
  }
}

let prlimitPath: string | null | undefined;

let staging = path.join(tmpdir(), 'geoflow-sandbox');
/**
 * Where files meant for a sandboxed program are put under names that say nothing (a folder the
 * service owns; the data folder's sandbox/ in the service): the program sees its bind mounts'
 * host paths in /proc/self/mountinfo, which should not name Workspaces, Runs or users.
 */
export const sandboxStaging = () => staging;
export function setSandboxStaging(dir: string): void {
  staging = dir;
}

/** The environment every sandboxed process starts from (the caller's variables are added). */
export function sandboxEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: '/usr/bin:/bin',
    HOME: '/tmp',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TMPDIR: '/tmp',
    // One thread per numeric library keeps the address space inside the limit on many-core hosts.
    OMP_NUM_THREADS: '1',
    OPENBLAS_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    // GDAL and PROJ inside have no network (no namespace to reach one); saying so spares them the tries.
    ...gdalNoNetworkEnv,
    ...extra,
  };
}

/**
 * GDAL's and PROJ's network off, for every GDAL a user's data reaches (in the service's own
 * processes too, where a network exists): libcurl is given a proxy of a scheme it does not know,
 * so a fetch fails before any socket opens (measured with strace: no connect()), whatever asks
 * for it (a GeoJSON `crs` link, a URL CRS, /vsicurl/); PROJ never downloads grids; SpatiaLite's
 * virtual tables (VirtualText reads any file a SQLite or GeoPackage file names) are not loaded.
 */
export const gdalNoNetworkEnv: Readonly<Record<string, string>> = {
  GDAL_HTTP_PROXY: 'refused://no-network-for-gdal',
  GDAL_HTTPS_PROXY: 'refused://no-network-for-gdal',
  CPL_VSIL_CURL_ALLOWED_EXTENSIONS: '.none',
  GDAL_HTTP_MAX_RETRY: '0',
  PROJ_NETWORK: 'OFF',
};

/**
 * bubblewrap's arguments for a sandbox with options.mounts and an empty environment but `env`,
 * up to the `--` that precedes the command: every namespace unshared (no network; `shareNet`
 * keeps the host's, for a GDAL that must reach a database), capabilities dropped, a read-only
 * root of /usr and a few /etc files, a private /tmp, and the process as a non-root user (its
 * uid and gid 65534, "nobody", inside the sandbox's own user namespace).
 */
export function bwrapArgs(bw: string, options: Pick<SandboxOptions, 'mounts' | 'cwd'> & { shareNet?: boolean }, env: Record<string, string>): string[] {
  return [
    bw,
    '--unshare-all',
    ...(options.shareNet ? ['--share-net'] : []),
    '--uid',
    '65534',
    '--gid',
    '65534',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/usr',
    '/usr',
    ...['bin', 'sbin', 'lib', 'lib64', 'lib32', 'libx32'].flatMap((d) => (existsSync(`/${d}`) ? ['--symlink', `usr/${d}`, `/${d}`] : [])),
    ...etcBinds(),
    ...(options.shareNet ? netEtcBinds() : []),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    ...options.mounts.flatMap((m) => [m.writable ? '--bind' : '--ro-bind', m.host, m.inside]),
    // The sandbox root is a tmpfs bwrap builds; make it read-only so only /tmp and writable mounts take writes.
    '--remount-ro',
    '/',
    ...(options.cwd ? ['--chdir', options.cwd] : []),
    '--clearenv',
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
    '--',
  ];
}

/** What a client of a network server reads of /etc (TLS roots for a database's sslmode); never resolv.conf: addresses come checked. */
function netEtcBinds(): string[] {
  return ['ssl', 'ca-certificates', 'ca-certificates.conf'].flatMap((n) => (existsSync(`/etc/${n}`) ? ['--ro-bind', `/etc/${n}`, `/etc/${n}`] : []));
}

/** prlimit's arguments that bound a command's memory and file sizes (and no core dumps), or none without prlimit. */
export function limitArgs(memoryBytes: number, maxFileBytes: number): string[] {
  if (prlimitPath === undefined) prlimitPath = findExecutable('prlimit');
  return prlimitPath ? [prlimitPath, `--as=${Math.floor(memoryBytes)}`, `--fsize=${Math.floor(maxFileBytes)}`, '--core=0', '--'] : [];
}

/** Runs command (argv, no shell) in the sandbox and reports how it ended; never throws for a failing command. */
export async function runSandboxed(command: string[], options: SandboxOptions, withoutBwrap = false): Promise<SandboxResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const limited = [...limitArgs(options.memoryBytes ?? 2 * GiB, options.maxFileBytes ?? 8 * GiB), ...command];
  // Inside a sandbox already (a GDAL host): its children run in it, under its own limits.
  const inside = process.env.SVC_SANDBOXED === '1';
  const bw = withoutBwrap || inside ? null : bwrapPath();
  const env = sandboxEnv({ ...options.env, ...(bw || inside ? {} : options.directEnv) });
  let argv: string[];
  if (bw) argv = [...bwrapArgs(bw, options, env), ...limited];
  else {
    if (options.fallback !== 'direct' && !inside) throw new SandboxUnavailable();
    argv = limited;
  }
  const child = await spawnProcess(argv[0]!, argv.slice(1), {
    ...(bw || !options.cwd ? {} : { cwd: options.cwd }),
    env: bw ? {} : env,
    stdout: 'pipe',
    stderr: 'pipe',
    // Own process group, so a timeout can kill bwrap and everything below it at once.
    detached: true,
  });
  const out = new Capped(options.maxOutputBytes ?? 64 * 1024);
  const err = new Capped(options.maxOutputBytes ?? 64 * 1024);
  child.stdout!.on('data', (c: Buffer) => {
    out.push(c);
    options.onStdout?.(c.toString('latin1'));
  });
  child.stderr!.on('data', (c: Buffer) => err.push(c));
  let timedOut = false;
  const killGroup = () => child.kill('SIGKILL', { group: true });
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, timeoutMs);
  options.signal?.addEventListener('abort', killGroup, { once: true });
  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on('error', (e: Error) => {
      err.push(Buffer.from(String(e.message)));
      resolve({ code: null, signal: null });
    });
    child.on('close', (c: number | null, s: string | null) => resolve({ code: c, signal: s }));
  });
  clearTimeout(timer);
  options.signal?.removeEventListener('abort', killGroup);
  // Leftovers of the group (a daemonised child outside bwrap's pid namespace) go too.
  killGroup();
  const stderr = err.text();
  if (bw && code !== 0 && !timedOut && /^bwrap: /.test(stderr)) {
    // bwrap itself could not build the sandbox (no user namespaces in this container, …).
    if (options.fallback === 'direct') return runSandboxed(command, { ...options, fallback: 'direct' }, true);
    throw new SandboxUnavailable(stderr.trim().split('\n')[0]);
  }
  return { exitCode: code, signal, stdout: out.text(), stderr, timedOut, sandboxed: bw !== null };
}
