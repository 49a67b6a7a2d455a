import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { DomainError } from '../../domain/errors.js';
import { gdal, layerSrs } from '../../geo/gdal/gdal.js';

/*
 * Small fixtures for the GDAL integration tests, generated with the installed GDAL CLIs so each
 * test states the data it relies on. Everything lives in one temp folder per test file.
 */

export function tempFolder(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), `geo-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function run(cmd: string, args: string[], cwd?: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function write(file: string, text: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const wktOptions = ['-oo', 'GEOM_POSSIBLE_NAMES=wkt', '-oo', 'KEEP_GEOM_COLUMNS=NO', '-oo', 'AUTODETECT_TYPE=YES'];

/** A vector file from CSV text with a `wkt` column (and typed columns). */
export function vectorFromCsv(out: string, csv: string, args: string[] = []): string {
  const src = `${out}.src.csv`;
  write(src, csv);
  run('ogr2ogr', [...args, out, src, ...wktOptions]);
  rmSync(src);
  return out;
}

/** Adds a layer made from CSV text to an existing GeoPackage. */
export function addGpkgLayer(gpkg: string, layer: string, csv: string, args: string[] = []): void {
  const src = path.join(path.dirname(gpkg), `${layer}.src.csv`);
  write(src, csv);
  run('ogr2ogr', ['-update', '-nln', layer, ...args, gpkg, src, ...wktOptions]);
  rmSync(src);
}

/** Zips files (python's zipfile: an independent writer) with the given archive names. */
export function pyZip(out: string, entries: { name: string; file?: string; text?: string; symlinkTo?: string }[]): string {
  const script = `
import json, sys, zipfile, stat
entries = json.loads(sys.argv[2])
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    for e in entries:
        if e.get('symlinkTo') is not None:
            info = zipfile.ZipInfo(e['name'])
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, e['symlinkTo'])
        elif e.get('file') is not None:
            z.write(e['file'], e['name'])
        else:
            z.writestr(e['name'], e.get('text', ''))
`;
  run('/usr/bin/python3', ['-c', script, out, JSON.stringify(entries)]);
  return out;
}

export interface ReadFeature {
  fid: number;
  props: Record<string, unknown>;
  wkt: string | null;
  type: string | null;
}

/** Reads a layer back through GDAL: what any assertion about produced files relies on. */
export function readLayer(
  file: string,
  layer?: string | number,
  openOptions?: string[],
): {
  name: string;
  geomType: number;
  srs: string | null;
  fields: { name: string; type: string; width: number }[];
  features: ReadFeature[];
} {
  const ds = openOptions ? gdal.drivers.get('CSV').open(file, 'r', openOptions) : gdal.open(file);
  try {
    const l = layer === undefined ? ds.layers.get(0) : ds.layers.get(layer as never);
    const fields: { name: string; type: string; width: number }[] = [];
    l.fields.forEach((f) => {
      fields.push({ name: f.name, type: f.type, width: f.width });
    });
    const features: ReadFeature[] = [];
    l.features.forEach((f) => {
      const g = f.getGeometry();
      features.push({ fid: f.fid, props: f.fields.toObject() as Record<string, unknown>, wkt: g ? g.toWKT() : null, type: g ? g.name : null });
    });
    // layerSrs collects gdal-async's stale CRS wrappers first (see geo/gdal/gdal.ts).
    const srs = layerSrs(l);
    let code: string | null = null;
    if (srs) {
      const c = srs.clone();
      try {
        c.autoIdentifyEPSG();
      } catch {
        // keep null
      }
      code = c.getAuthorityCode(null) ? `${c.getAuthorityName(null)}:${c.getAuthorityCode(null)}` : null;
    }
    return { name: l.name, geomType: l.geomType, srs: code, fields, features };
  } finally {
    ds.close();
  }
}

export function layerNames(file: string): string[] {
  const ds = gdal.open(file);
  try {
    const names: string[] = [];
    ds.layers.forEach((l) => {
      names.push(l.name);
    });
    return names;
  } finally {
    ds.close();
  }
}

/** Width and height in metres of a lon/lat envelope near its centre (spherical approximation is enough for ±1%). */
export function envelopeMetres(env: { minX: number; maxX: number; minY: number; maxY: number }): { width: number; height: number } {
  const lat = ((env.minY + env.maxY) / 2) * (Math.PI / 180);
  const metresPerDegree = 111_320;
  return { width: (env.maxX - env.minX) * metresPerDegree * Math.cos(lat), height: (env.maxY - env.minY) * 110_574 };
}

/** Awaits a promise that must be refused with a DomainError (of the given code, when given). */
export async function refusal(p: Promise<unknown>, code?: string): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected a refusal').toBeInstanceOf(DomainError);
  if (code) expect((err as DomainError).code).toBe(code);
  return err as DomainError;
}

export const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
