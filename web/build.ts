/**
 * Builds the browser app (web/src) into web/dist with esbuild: one small entry script, the
 * map (Leaflet) in a separate chunk loaded only on the Workspace canvas, hashed file names
 * under assets/ (served as immutable), and index.html pointing at them.
 *
 *   node --import tsx web/build.ts          build and print the sizes
 *
 * The API calls ensureWebBuild() at start: it builds when web/dist is missing or older than
 * the sources, so `npm start` on a fresh clone just works.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const webDir = path.dirname(fileURLToPath(import.meta.url));
export const srcDir = path.join(webDir, 'src');
export const distDir = path.join(webDir, 'dist');
const repoDir = path.dirname(webDir);

/** The first page may load at most this much JavaScript (the issue's budget). */
export const FIRST_PAGE_JS_BUDGET = 300 * 1024;

export interface BuildReport {
  /** Paths relative to the dist folder. */
  entry: { js: string; css: string | null };
  /** Bytes of JavaScript the first page loads: the entry plus its static imports. */
  firstPageJsBytes: number;
  firstPageCssBytes: number;
  files: { file: string; bytes: number; loadedAtStart: boolean }[];
}

/** Files whose change means a rebuild. */
async function newestInput(): Promise<number> {
  let newest = 0;
  const visit = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await visit(full);
      else newest = Math.max(newest, (await stat(full)).mtimeMs);
    }
  };
  await visit(srcDir);
  // the app also bundles the server's scope list
  for (const file of [
    path.join(webDir, 'index.html'),
    fileURLToPath(import.meta.url),
    path.join(repoDir, 'package-lock.json'),
    path.join(repoDir, 'domain/accounts/scopes.ts'),
  ]) {
    if (existsSync(file)) newest = Math.max(newest, (await stat(file)).mtimeMs);
  }
  return newest;
}

async function isFresh(outDir: string): Promise<boolean> {
  const marker = path.join(outDir, 'build-report.json');
  if (!existsSync(marker) || !existsSync(path.join(outDir, 'index.html'))) return false;
  return (await stat(marker)).mtimeMs >= (await newestInput());
}

/** Builds into `outDir` (replaced whole, atomically enough for concurrent starts). */
export async function buildWeb(outDir: string = distDir): Promise<BuildReport> {
  const esbuild = await import('esbuild');
  const tmp = `${outDir}.tmp-${process.pid}-${randomBytes(3).toString('hex')}`;
  try {
    const result = await esbuild.build({
      absWorkingDir: repoDir,
      entryPoints: { app: path.join(srcDir, 'main.ts') },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'browser',
      target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
      outdir: path.join(tmp, 'assets'),
      entryNames: '[name]-[hash]',
      chunkNames: '[name]-[hash]',
      assetNames: '[name]-[hash]',
      // .geojson: the offline basemap (components/map), fetched by the first map rather than parsed as code
      loader: { '.png': 'file', '.svg': 'file', '.geojson': 'file' },
      minify: true,
      sourcemap: 'linked',
      legalComments: 'linked',
      metafile: true,
      write: true,
      logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
    });
    const outputs = result.metafile.outputs;
    const rel = (p: string) => path.relative(tmp, path.resolve(repoDir, p)).split(path.sep).join('/');
    const entryKey = Object.keys(outputs).find((k) => outputs[k]!.entryPoint && k.endsWith('.js'));
    if (!entryKey) throw new Error('esbuild produced no entry script');
    const entry = outputs[entryKey]!;

    // What the first page loads: the entry and, transitively, its static imports.
    const atStart = new Set<string>();
    const walk = (key: string) => {
      if (atStart.has(key)) return;
      atStart.add(key);
      for (const imp of outputs[key]?.imports ?? []) if (imp.kind === 'import-statement' && !imp.external) walk(imp.path);
    };
    walk(entryKey);
    if (entry.cssBundle) atStart.add(entry.cssBundle);

    const files = Object.entries(outputs)
      .filter(([k]) => !k.endsWith('.map'))
      .map(([k, v]) => ({ file: rel(k), bytes: v.bytes, loadedAtStart: atStart.has(k) }))
      .sort((a, b) => b.bytes - a.bytes);
    const report: BuildReport = {
      entry: { js: rel(entryKey), css: entry.cssBundle ? rel(entry.cssBundle) : null },
      firstPageJsBytes: files.filter((f) => f.loadedAtStart && f.file.endsWith('.js')).reduce((n, f) => n + f.bytes, 0),
      firstPageCssBytes: files.filter((f) => f.loadedAtStart && f.file.endsWith('.css')).reduce((n, f) => n + f.bytes, 0),
      files,
    };

    const preload = [...atStart]
      .filter((k) => k !== entryKey && k.endsWith('.js'))
      .map((k) => `<link rel="modulepreload" href="/${rel(k)}" />`)
      .join('\n    ');
    const template = await readFile(path.join(webDir, 'index.html'), 'utf8');
    const html = template
      .replace('<!--styles-->', report.entry.css ? `<link rel="stylesheet" href="/${report.entry.css}" />` : '')
      .replace('<!--scripts-->', `<script type="module" src="/${report.entry.js}"></script>${preload ? `\n    ${preload}` : ''}`);
    await writeFile(path.join(tmp, 'index.html'), html);
    await writeFile(path.join(tmp, 'build-report.json'), `${JSON.stringify(report, null, 2)}\n`);
    await swapInto(tmp, outDir);
    return report;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Moves the fresh build into place; another process may be doing the same at the same time. */
async function swapInto(tmp: string, outDir: string): Promise<void> {
  await mkdir(path.dirname(outDir), { recursive: true });
  try {
    await rename(tmp, outDir);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'EISDIR') throw error;
  }
  // Another start finished first: its build is as fresh as ours (esbuild output is deterministic).
  if (await isFresh(outDir)) return;
  const old = `${outDir}.old-${process.pid}-${randomBytes(3).toString('hex')}`;
  try {
    await rename(outDir, old);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    await rename(tmp, outDir);
  } catch (error) {
    // A concurrent build won the race; its output is as fresh as ours.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
  }
  await rm(old, { recursive: true, force: true });
}

let pending: Promise<string> | null = null;

/**
 * The dist folder, built first when it is missing or older than web/src. When the folder cannot
 * be written (a read-only install) an existing build is used as it is.
 */
export function ensureWebBuild(outDir: string = distDir): Promise<string> {
  pending ??= (async () => {
    if (await isFresh(outDir)) return outDir;
    try {
      await buildWeb(outDir);
    } catch (error) {
      if (existsSync(path.join(outDir, 'index.html'))) {
        process.emitWarning(`web/dist is older than web/src but could not be rebuilt (${(error as Error).message}); serving the existing build`);
        return outDir;
      }
      throw new Error(`The browser app could not be built: ${(error as Error).message}`, { cause: error });
    }
    return outDir;
  })().finally(() => {
    pending = null;
  });
  return pending;
}

// Run as a script: build and print the sizes.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const report = await buildWeb();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  for (const f of report.files) console.log(`${f.loadedAtStart ? '*' : ' '} ${kb(f.bytes).padStart(9)}  ${f.file}`);
  console.log(
    `first page: ${kb(report.firstPageJsBytes)} of JavaScript (budget ${kb(FIRST_PAGE_JS_BUDGET)}), ${kb(report.firstPageCssBytes)} of CSS; * = loaded at start`,
  );
  console.log(`written to ${path.relative(process.cwd(), distDir) || distDir}`);
  if (report.firstPageJsBytes > FIRST_PAGE_JS_BUDGET) {
    console.error('the first page is over its JavaScript budget');
    process.exitCode = 1;
  }
}
