import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/*
 * Hosts made of Linux network namespaces: each host is a namespace with one veth link to a bridge
 * in the root namespace (where the test process runs and reaches every host), its own address in
 * 198.18.0.0/15 (RFC 2544's range for test networks, never routed elsewhere) and its own data
 * folder. Faults are what happens to real hosts: a link goes down, a route between two hosts drops
 * every packet (a partition), a data disk is a small tmpfs.
 *
 * Everything made is written down first in a record under /run/geoflow-netns (with the owner's
 * pid and start time), so a run that is interrupted, or killed outright, leaves nothing that the
 * next run (or scripts/test.ts when it ends) does not remove: sweepNetworks().
 */

const RECORDS = '/run/geoflow-netns';
/** Every namespace, link and bridge name starts with this, followed by the network's id. */
const PREFIX = 'gfc';
/** A locally administered hardware address that no interface has: where a partition sends packets. */
const NOWHERE = '02:00:00:00:de:ad';

interface NetworkRecord {
  id: string;
  owner: { pid: number; started: string };
  namespaces: string[];
  links: string[];
  mounts: string[];
  dirs: string[];
}

function ip(args: string[], allowFailure = false): string {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0 && !allowFailure) throw new Error(`ip ${args.join(' ')} failed: ${(r.stderr || r.stdout || String(r.error)).trim()}`);
  return r.stdout ?? '';
}

/** Why hosts cannot be made here, or false when they can (tried by making and removing a namespace). */
export function networkUnavailable(): string | false {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'network namespaces need root (the cluster suite runs as uid 0)';
  const which = spawnSync('ip', ['-V'], { encoding: 'utf8' });
  if (which.error || which.status !== 0) return 'the `ip` command (iproute2) is missing';
  const probe = `${PREFIX}probe${process.pid.toString(36)}`.slice(0, 15);
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0) return `cannot make a network namespace (ip netns add): ${made.stderr.trim()}`;
  const veth = spawnSync('ip', ['link', 'add', `${probe}a`.slice(-15), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', probe], { encoding: 'utf8' });
  spawnSync('ip', ['netns', 'del', probe]);
  if (veth.status !== 0) return `cannot make a veth pair: ${veth.stderr.trim()}`;
  const bridge = spawnSync('ip', ['link', 'add', `${probe}b`.slice(-15), 'type', 'bridge'], { encoding: 'utf8' });
  spawnSync('ip', ['link', 'del', `${probe}b`.slice(-15)]);
  if (bridge.status !== 0) return `cannot make a bridge: ${bridge.stderr.trim()}`;
  return false;
}

/** A process's start time (field 22 of /proc/<pid>/stat): with the pid, it tells a live owner from a reused pid. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

const recordFile = (id: string) => path.join(RECORDS, `${id}.json`);

/** Removes everything a record names: processes in its namespaces first, then mounts, namespaces, links, folders. */
function tearDown(record: NetworkRecord): void {
  for (const ns of record.namespaces) {
    const pids = ip(['netns', 'pids', ns], true).split('\n').filter(Boolean).map(Number);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
  }
  // Processes killed above may still hold files in a mount for a moment: a lazy unmount detaches it now.
  for (const mount of record.mounts) spawnSync('umount', ['-l', mount]);
  for (const ns of record.namespaces) ip(['netns', 'del', ns], true);
  for (const link of record.links) ip(['link', 'del', link], true);
  for (const dir of record.dirs) rmSync(dir, { recursive: true, force: true });
  rmSync(recordFile(record.id), { force: true });
}

/**
 * Removes what earlier runs left: every record whose owner is no longer running, and any
 * namespace or link with our prefix that no record names (the record is written before anything
 * is made, so such a thing belongs to no live run). Returns what it removed, for a log line.
 */
export function sweepNetworks(): string[] {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return [];
  const removed: string[] = [];
  const live = new Set<string>();
  for (const file of existsSync(RECORDS) ? readdirSync(RECORDS) : []) {
    let record: NetworkRecord;
    try {
      record = JSON.parse(readFileSync(path.join(RECORDS, file), 'utf8')) as NetworkRecord;
    } catch {
      unlinkSync(path.join(RECORDS, file));
      continue;
    }
    if (startTime(record.owner.pid) === record.owner.started) {
      live.add(record.id);
      continue;
    }
    tearDown(record);
    removed.push(`network ${record.id} (${record.namespaces.length} hosts)`);
  }
  // (a probe of networkUnavailable() lives for milliseconds and removes itself)
  const ownerless = (name: string) =>
    name.startsWith(PREFIX) && !name.startsWith(`${PREFIX}probe`) && ![...live].some((id) => name.startsWith(`${PREFIX}${id}`));
  for (const ns of ip(['netns', 'list'], true)
    .split('\n')
    .map((l) => l.split(' ')[0]!)) {
    if (ns && ownerless(ns)) {
      tearDown({ id: ns, owner: { pid: 0, started: '' }, namespaces: [ns], links: [], mounts: [], dirs: [] });
      removed.push(`namespace ${ns}`);
    }
  }
  for (const line of ip(['-o', 'link', 'show'], true).split('\n')) {
    const name = /^\d+:\s+([^:@\s]+)/.exec(line)?.[1];
    if (name && ownerless(name)) {
      ip(['link', 'del', name], true);
      removed.push(`link ${name}`);
    }
  }
  return removed;
}

export interface Host {
  name: string;
  /** Its namespace, for `ip netns exec`. */
  netns: string;
  address: string;
  /** Its own data folder (nothing else of the host lives on the shared file system). */
  dataDir: string;
  /** The command line that runs `command` on this host. */
  wrap(command: string, args: string[]): [string, string[]];
  /** Starts a process on this host. */
  spawn(command: string, args: string[], options?: SpawnOptions): ChildProcess;
  /** Cuts the host off the network (its link down), or puts it back. */
  linkDown(): void;
  linkUp(): void;
  /** Drops every packet between this host and another, both ways, until heal(). */
  partitionFrom(other: Host): void;
  heal(other: Host): void;
  /** Mounts a tmpfs of `megabytes` as (a folder under) the host's data folder: a small disk of its own. */
  smallDisk(megabytes: number, folder?: string): string;
}

export interface Network {
  id: string;
  /** The root namespace's address on the bridge: where the test process listens for the hosts. */
  gateway: string;
  /** The /24 the hosts are in. */
  cidr: string;
  addHost(name: string): Host;
  host(name: string): Host;
  /** Stops every process on the hosts and removes all of it (synchronous: also runs on exit and on signals). */
  destroy(): void;
}

/**
 * A new network of hosts, with a /24 of 198.18.0.0/15 no other network on this machine uses.
 * `baseDir` holds the hosts' data folders (removed with the network).
 */
export function createNetwork(baseDir: string): Network {
  mkdirSync(RECORDS, { recursive: true });
  sweepNetworks();
  const used = ip(['-4', '-o', 'addr', 'show'], true);
  let id = '';
  let third = 0;
  let second = 18;
  for (let tries = 0; tries < 100; tries++) {
    id = Math.floor(Math.random() * 0xffff)
      .toString(16)
      .padStart(4, '0');
    const n = Math.floor(Math.random() * 512);
    [second, third] = [18 + (n >> 8), n & 255];
    if (!used.includes(` 198.${second}.${third}.`) && !existsSync(recordFile(id))) break;
  }
  const subnet = `198.${second}.${third}`;
  const record: NetworkRecord = {
    id,
    owner: { pid: process.pid, started: startTime(process.pid) ?? '' },
    namespaces: [],
    links: [],
    mounts: [],
    dirs: [baseDir],
  };
  const save = () => writeFileSync(recordFile(id), JSON.stringify(record));
  save();

  const bridge = `${PREFIX}${id}br`;
  record.links.push(bridge);
  save();
  ip(['link', 'add', bridge, 'type', 'bridge']);
  ip(['addr', 'add', `${subnet}.1/24`, 'dev', bridge]);
  ip(['link', 'set', bridge, 'up']);

  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    tearDown(record);
    process.off('exit', destroy);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(signal, onSignal);
  };
  // Interrupted (Ctrl-C reaches the whole process group) or ending without afterAll: still removed.
  const onSignal = (signal: NodeJS.Signals) => {
    destroy();
    process.kill(process.pid, signal);
  };
  process.once('exit', destroy);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, onSignal);

  const hosts = new Map<string, Host>();
  const addHost = (name: string): Host => {
    if (!/^[a-z0-9]{1,5}$/.test(name)) throw new Error(`host names are 1–5 lower-case letters or digits (interface names are short), got "${name}"`);
    const netns = `${PREFIX}${id}-${name}`;
    const link = `${PREFIX}${id}${name}`;
    const address = `${subnet}.${hosts.size + 2}`;
    const dataDir = path.join(baseDir, name);
    mkdirSync(dataDir, { recursive: true });
    record.namespaces.push(netns);
    record.links.push(link);
    save();
    ip(['netns', 'add', netns]);
    ip(['link', 'add', link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
    ip(['link', 'set', link, 'master', bridge, 'up']);
    ip(['-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
    ip(['-n', netns, 'link', 'set', 'eth0', 'up']);
    ip(['-n', netns, 'link', 'set', 'lo', 'up']);
    const wrap = (command: string, args: string[]): [string, string[]] => ['ip', ['netns', 'exec', netns, command, ...args]];
    const host: Host = {
      name,
      netns,
      address,
      dataDir,
      wrap,
      spawn(command, args, options = {}) {
        const [c, a] = wrap(command, args);
        return spawn(c, a, options);
      },
      linkDown: () => ip(['link', 'set', link, 'down']),
      linkUp: () => ip(['link', 'set', link, 'up']),
      // Each side sends the other's packets to a hardware address no host has: they are dropped
      // without a word, as a partition drops them (a blackhole route would fail at once with
      // EINVAL, which no real partition does).
      partitionFrom(other) {
        ip(['-n', netns, 'neigh', 'replace', other.address, 'lladdr', NOWHERE, 'nud', 'permanent', 'dev', 'eth0']);
        ip(['-n', other.netns, 'neigh', 'replace', address, 'lladdr', NOWHERE, 'nud', 'permanent', 'dev', 'eth0']);
      },
      heal(other) {
        ip(['-n', netns, 'neigh', 'del', other.address, 'dev', 'eth0'], true);
        ip(['-n', other.netns, 'neigh', 'del', address, 'dev', 'eth0'], true);
      },
      smallDisk(megabytes, folder = '.') {
        const dir = path.resolve(dataDir, folder);
        mkdirSync(dir, { recursive: true });
        record.mounts.unshift(dir);
        save();
        const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0755`, `${PREFIX}${id}-${name}`, dir], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`mount tmpfs on ${dir} failed: ${r.stderr.trim()}`);
        return dir;
      },
    };
    hosts.set(name, host);
    return host;
  };
  return {
    id,
    gateway: `${subnet}.1`,
    cidr: `${subnet}.0/24`,
    addHost,
    host(name) {
      const h = hosts.get(name);
      if (!h) throw new Error(`no host ${name}`);
      return h;
    },
    destroy,
  };
}
