import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/*
 * The previous release's code, for the upgrade test: the newest `v*` tag that HEAD contains and
 * that is not HEAD itself (SVC_UPGRADE_FROM names another), checked out with `git archive` into a
 * folder of its own. Its node_modules are the current ones when its direct dependencies are
 * installed here at the versions it locked (a link: lockIncluded), else `npm ci` installs them once into `<data>/releases/<tag>-<lock hash>` (many
 * minutes on a busy machine: gdal-async compiles), which later runs link.
 */

const git = (args: string[], cwd = process.cwd()) => spawnSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });

/** The tag to upgrade from, or why there is none (the reason a test skips). */
export function previousRelease(): { tag: string; commit: string } | { missing: string } {
  if (git(['rev-parse', '--git-dir']).status !== 0) return { missing: 'not a git clone: the upgrade test needs the previous release tag' };
  const head = git(['rev-parse', 'HEAD']).stdout.trim();
  const wanted = process.env.SVC_UPGRADE_FROM;
  const tags = wanted ? [wanted] : git(['tag', '--merged', 'HEAD', '--list', 'v*', '--sort=-v:refname']).stdout.split('\n').filter(Boolean);
  for (const tag of tags) {
    const commit = git(['rev-parse', '--verify', '--quiet', `${tag}^{commit}`]).stdout.trim();
    if (!commit) return { missing: `the tag ${tag} (SVC_UPGRADE_FROM) is not in this clone` };
    if (commit !== head) return { tag, commit };
  }
  return {
    missing: wanted
      ? `the tag ${wanted} is HEAD itself`
      : 'no release tag (v*) before HEAD in this clone: `git fetch --tags` (the upgrade test starts the previous release)',
  };
}

/** Checks the release out into `dir` (made here) and gives it node_modules. Answers how they came. */
export function checkOutRelease(tag: string, dir: string, cacheRoot: string): { node_modules: 'linked' | 'cached' | 'installed' } {
  const unpack = (into: string) => {
    mkdirSync(into, { recursive: true });
    const archive = spawnSync('sh', ['-c', `git archive --format=tar ${JSON.stringify(tag)} | tar -x -C ${JSON.stringify(into)}`], { encoding: 'utf8' });
    if (archive.status !== 0) throw new Error(`git archive ${tag} failed: ${archive.stderr}`);
  };
  unpack(dir);
  const lock = git(['show', `${tag}:package-lock.json`]).stdout;
  const current = path.resolve('node_modules');
  if (lockIncluded(lock, readFileSync('package-lock.json', 'utf8')) && existsSync(current)) {
    symlinkSync(realpathSync(current), path.join(dir, 'node_modules'));
    return { node_modules: 'linked' };
  }
  // The release's own dependencies, installed once per lock file and kept between runs.
  const cache = path.join(cacheRoot, `${tag}-${createHash('sha256').update(lock).digest('hex').slice(0, 12)}`);
  const done = path.join(cache, '.installed');
  let how: 'cached' | 'installed' = 'cached';
  if (!existsSync(done)) {
    rmSync(cache, { recursive: true, force: true });
    unpack(cache);
    // Bounded: a synchronous child that never ends is beyond vitest's own timeouts.
    const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: cache, encoding: 'utf8', stdio: 'inherit', timeout: 20 * 60_000 });
    if (install.status !== 0) throw new Error(`npm ci for ${tag} failed (${install.error?.message ?? `exit ${install.status}`})`);
    writeFileSync(done, `${new Date().toISOString()}\n`);
    how = 'installed';
  }
  symlinkSync(path.join(cache, 'node_modules'), path.join(dir, 'node_modules'));
  return { node_modules: how };
}

/**
 * Whether the release can run on `newer`'s node_modules: each of its direct dependencies is
 * installed there at the version its own lock installed. npm then gave every one of them what its
 * ranges ask for, so packages only added since, or moved deeper in the tree, do not matter.
 */
export function lockIncluded(older: string, newer: string): boolean {
  type Lock = { packages?: Record<string, { version?: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> }> };
  const before = (JSON.parse(older) as Lock).packages ?? {};
  const now = (JSON.parse(newer) as Lock).packages ?? {};
  const root = before[''] ?? {};
  const direct = [...Object.keys(root.dependencies ?? {}), ...Object.keys(root.devDependencies ?? {})];
  return direct.every((name) => now[`node_modules/${name}`]?.version === before[`node_modules/${name}`]?.version);
}
