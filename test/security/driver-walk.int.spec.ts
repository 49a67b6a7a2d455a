import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/errors.js';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { gdal, IN_PROCESS_DRIVERS, NeedsSandbox, openDataset, unsandboxedGdalEnv, uploadDrivers, type DatasetRef } from '../../geo/gdal/gdal.js';
import { closeIsolation, convertDataset, dataPreview, inspectDataset, spatialPreview } from '../../geo/isolation/index.js';
import { bwrapArgs, bwrapPath } from '../../geo/sandbox/sandbox.js';
import {
  type Canary,
  type Craft,
  control,
  crafted,
  type Fixture,
  newCanary,
  noReferenceField,
  type Place,
  run,
  setToolDir,
  shows,
  uncrafted,
} from './driver-walk-fixtures.js';

/*
 * Issue 32, finding 1: a file GDAL opens can name another file (a PDS4 label's file_name, an
 * ISIS3 ^Core, a MapInfo seamless table …), and GDAL follows it. This walks every driver GDAL
 * offers for uploads. Each driver whose files can name another file has a crafted dataset
 * naming a canary outside the dataset's folder; plain GDAL on this machine must read the canary
 * from it (the control: else the fixture proves nothing), and the service, through geo/isolation
 * as its API and worker call it, must not: not in results, not in error messages, not in the
 * files it writes. Every other driver is listed with the reason its files cannot name another
 * file (or, for the few whose reference is not crafted yet, as a to-do with the reason), so a
 * GDAL upgrade that brings a driver fails here until someone has looked at it.
 */

/** Whether bubblewrap can build a sandbox here (installed, and user namespaces allowed). */
function sandboxProblem(): string | null {
  const bw = bwrapPath();
  if (!bw) return 'bubblewrap (bwrap) is not installed';
  const argv = bwrapArgs(bw, { mounts: [] }, { PATH: '/usr/bin:/bin' });
  const probe = spawnSync(argv[0]!, [...argv.slice(1), 'true'], { encoding: 'utf8', timeout: 20_000 });
  return probe.status === 0 ? null : `bubblewrap cannot build a sandbox here: ${(probe.stderr || probe.error?.message || '').trim().split('\n')[0]}`;
}

const problem = sandboxProblem();
if (problem) console.warn(`driver walk skipped: ${problem}`);

const root = mkdtempSync(path.join(tmpdir(), 'dw-'));
setToolDir(path.join(root, 'tools'));
let caseNumber = 0;

afterAll(() => {
  closeIsolation();
  rmSync(root, { recursive: true, force: true });
});

describe('the upload drivers', () => {
  it('are each crafted to name a file outside the dataset, listed with the reason they cannot, or listed as not crafted yet', () => {
    const drivers = uploadDrivers();
    expect(drivers.length).toBeGreaterThan(100);
    const tables = [crafted, noReferenceField, uncrafted];
    const unlisted = drivers.filter((d) => tables.every((t) => !(d in t)));
    const twice = drivers.filter((d) => tables.filter((t) => d in t).length > 1);
    const stale = tables.flatMap((t) => Object.keys(t)).filter((d) => !drivers.includes(d));
    expect(unlisted, 'drivers in no table (look at what their files can name, then add them)').toEqual([]);
    expect(twice, 'drivers in more than one table').toEqual([]);
    expect(stale, 'drivers this GDAL does not offer for uploads').toEqual([]);
    for (const [driver, reason] of Object.entries({ ...noReferenceField, ...uncrafted })) expect(reason.length, `${driver}'s reason`).toBeGreaterThan(10);
  });

  // Files of these drivers name other files, but no dataset is crafted for them yet: to do.
  for (const [driver, reason] of Object.entries(uncrafted)) it.todo(`${driver}: ${reason}`);
});

/** Everything a run of the service produced, as text the canary could hide in. */
class Seen {
  readonly parts: string[] = [];
  readonly outcomes: string[] = [];
  result(step: string, value: unknown) {
    this.parts.push(JSON.stringify(value));
    this.outcomes.push(`${step}: ok`);
  }
  error(step: string, error: unknown) {
    const e = error as { message?: string; code?: string; details?: unknown };
    this.parts.push(`${e?.message ?? String(error)} ${JSON.stringify(e?.details ?? null)}`);
    this.outcomes.push(`${step}: ${error instanceof DomainError ? error.code : (e?.message ?? String(error)).slice(0, 80)}`);
  }
  async step<T>(step: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      const value = await work();
      this.result(step, value);
      return value;
    } catch (error) {
      this.error(step, error);
      return undefined;
    }
  }
  text(): string {
    return this.parts.join('\n');
  }
}

/** What the files a conversion wrote hold: their bytes, and a raster's pixel values read back. */
function outputText(dir: string): string {
  const parts: string[] = [];
  const visit = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const file = path.join(d, e.name);
      if (e.isDirectory()) visit(file);
      else if (e.isFile()) {
        parts.push(readFileSync(file, 'latin1'));
        if (/\.tiff?$/i.test(e.name)) parts.push(rasterValues(file));
      }
    }
  };
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory()) visit(dir);
  return parts.join('\n');
}

/** A written raster's pixel values as text: the top-left 512×512 of each band (where the fixtures put the canary). */
function rasterValues(file: string): string {
  const ds = gdal.drivers.get('GTiff').open(file);
  try {
    const out: string[] = [];
    const x = Math.min(ds.rasterSize.x, 512);
    const y = Math.min(ds.rasterSize.y, 512);
    ds.bands.forEach((band) => {
      out.push(Array.from(band.pixels.read(0, 0, x, y) as ArrayLike<number>).join(' '));
    });
    return out.join('\n');
  } finally {
    ds.close();
  }
}

/**
 * In this process (what the API and worker do before they decide where to read): openDataset
 * either says the dataset needs the sandbox or opens it with a driver allowed here; what it
 * then reads must not be the canary.
 */
async function openedHere(ref: DatasetRef, canary: Canary, fixture: Fixture): Promise<string> {
  let ds: Awaited<ReturnType<typeof openDataset>>;
  try {
    ds = await openDataset(ref);
  } catch (error) {
    if (error instanceof NeedsSandbox) return 'needs the sandbox';
    if (error instanceof DomainError) {
      expect(shows(`${error.message} ${JSON.stringify(error.details)}`, canary, fixture.pixels)).toBe(false);
      return `refused here: ${error.code}`;
    }
    throw error;
  }
  try {
    expect(IN_PROCESS_DRIVERS as readonly string[]).toContain(ds.driver.description);
    const text: string[] = [];
    ds.layers.forEach((layer) => {
      layer.features.forEach((f) => {
        text.push(JSON.stringify(f.fields.toObject()));
      });
    });
    expect(shows(text.join('\n'), canary, fixture.pixels), 'the canary, read in the service process').toBe(false);
    return `opened here as ${ds.driver.description}`;
  } finally {
    ds.close();
  }
}

/** A fresh case folder: the dataset's own folder and, beside it, the canary's. */
function newPlace(how: Place['how']): Place & { dir: string } {
  const dir = path.join(root, `${++caseNumber}${how[0]}`);
  const p = { dir, data: path.join(dir, 'data'), outside: path.join(dir, 'outside'), work: path.join(dir, 'work'), how, canary: newCanary() };
  for (const d of [p.data, p.outside, p.work]) mkdirSync(d, { recursive: true });
  return p;
}

/**
 * The control reads a copy of the dataset's folder beside it (a `../` name still reaches the
 * canary): GDAL may write beside what it reads (a GML .gfs, a .aux.xml), and those files must
 * not reach the service's run.
 */
function controlled(p: Place & { dir: string }, fixture: Fixture): ReturnType<typeof control> {
  const copy = path.join(p.dir, 'ctl');
  cpSync(p.data, copy, { recursive: true });
  const moved = (file?: string) => file?.split(p.data).join(copy);
  return control(
    { ...fixture, open: moved(fixture.open)!, ...(fixture.controlPath ? { controlPath: moved(fixture.controlPath)! } : {}) },
    path.join(p.dir, 'control'),
  );
}

async function walk(driver: string, craft: Craft, how: Place['how']): Promise<void> {
  const p = newPlace(how);
  const fixture = craft.make(p);
  const canary = p.canary;

  // The control runs on its copy while the service reads the dataset.
  const controlRun = controlled(p, fixture);

  const ref = datasetAt(fixture.open);
  const here = await openedHere(ref, canary, fixture);

  const seen = new Seen();
  const info = await seen.step('inspect', () => inspectDataset(ref));
  const layers = [...new Set([...(info?.layers.map((l) => l.name) ?? []), ...(fixture.layers ?? [])])];
  for (const layer of layers) {
    await seen.step(`data preview ${layer}`, () => dataPreview(ref, layer));
    const listed = info?.layers.find((l) => l.name === layer);
    if (!listed || listed.has_geometry) await seen.step(`spatial preview ${layer}`, () => spatialPreview(ref, layer));
  }
  const out = path.join(p.dir, 'out');
  const raster = info ? info.dataset_type === 'raster' : fixture.kind === 'raster';
  await seen.step('convert', () => convertDataset(ref, { outputFormat: raster ? 'GTiff' : 'GeoJSON' }, out));

  const plain = await controlRun;
  expect(plain.driver, `control: plain GDAL opens the fixture with ${craft.reportedAs ?? driver}\n${plain.output.slice(0, 2000)}`).toBe(
    craft.reportedAs ?? driver,
  );
  expect(shows(plain.output, canary, fixture.pixels), `control: plain GDAL reads the canary through the fixture\n${plain.output.slice(0, 2000)}`).toBe(true);

  const outcome = `${driver} (${how}): ${here}; ${seen.outcomes.join('; ')}`;
  expect(shows(seen.text(), canary, fixture.pixels), `the canary in what the service answered\n${outcome}`).toBe(false);
  expect(shows(outputText(out), canary, fixture.pixels), `the canary in what the service wrote\n${outcome}`).toBe(false);
  console.info(outcome);
}

describe.skipIf(problem !== null)('a dataset naming a file outside its folder', { timeout: 120_000 }, () => {
  for (const [driver, crafts] of Object.entries(crafted)) {
    for (const craft of crafts) {
      for (const how of ['relative', 'absolute'] as const) {
        if (how === 'absolute' && craft.relativeOnly) continue;
        it(`${driver}: ${craft.field} (${how === 'relative' ? 'a ../ path' : 'an absolute path'})`, async (ctx) => {
          const missing = craft.missing?.();
          if (missing) {
            console.warn(`${driver} skipped: ${missing}`);
            ctx.skip();
          }
          await walk(driver, craft, how);
        });
      }
    }
  }

  it('a PDS4 label named .csv opens here as CSV, and the delivery ogr2ogr reads it as CSV too', async () => {
    const p = newPlace('relative');
    const [pds4] = crafted.PDS4!;
    const made = pds4!.make(p);
    const label = path.join(p.data, 'label.csv');
    cpSync(made.open, label);
    rmSync(made.open);
    const fixture: Fixture = { open: label, kind: 'vector' };
    // Plain GDAL takes the label for what it is, and follows it.
    const plain = await controlled(p, fixture);
    expect(plain.driver).toBe('PDS4');
    expect(shows(plain.output, p.canary)).toBe(true);

    const ref = datasetAt(label);
    expect(await openedHere(ref, p.canary, fixture)).toBe('opened here as CSV');
    // The delivery's ogr2ogr runs outside the sandbox with unsandboxedGdalEnv.
    const copy = path.join(p.dir, 'delivered.geojson');
    const env = { ...process.env, ...unsandboxedGdalEnv(['GeoJSON']) };
    run('ogr2ogr', ['-f', 'GeoJSON', copy, label], { cwd: p.data, env });
    expect(shows(readFileSync(copy, 'latin1'), p.canary)).toBe(false);
    const info = run('ogrinfo', ['-ro', '-so', label], { cwd: p.data, env });
    expect(info).toContain("using driver `CSV'");
  });
});
