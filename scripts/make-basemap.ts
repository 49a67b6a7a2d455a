/**
 * Writes the browser's offline basemap, web/src/components/map/natural-earth-110m.geojson, from
 * the Natural Earth 1:110m countries the tests ship (test/fixtures/natural-earth, public domain):
 *
 * - `land`: the countries dissolved into one fill (the coast is its edge);
 * - `boundaries`: the borders between countries, as lines (country outlines minus the coast).
 *
 * Coordinates are rounded to 0.01° (about 1 km, far below what 1:110m data resolves) and repeated
 * points dropped, which keeps the file small enough to load with the first map.
 *
 *   node --import tsx scripts/make-basemap.ts
 */
import gdal from 'gdal-async';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const input = path.join(repo, 'test/fixtures/natural-earth/natural-earth-110m.gpkg');
const output = path.join(repo, 'web/src/components/map/natural-earth-110m.geojson');

type Position = [number, number];
type Line = Position[];

const round = (v: number) => Math.round(v * 100) / 100;

/** Rounded positions without repeats; null when too few are left to draw. */
function tidy(points: Line, minimum: number): Line | null {
  const out: Line = [];
  for (const [x, y] of points) {
    const p: Position = [round(x), round(y)];
    const last = out[out.length - 1];
    if (!last || last[0] !== p[0] || last[1] !== p[1]) out.push(p);
  }
  return out.length >= minimum ? out : null;
}

function polygons(geometry: gdal.Geometry): Line[][] {
  const json = JSON.parse(geometry.toJSON()) as { type: string; coordinates: unknown };
  const list = json.type === 'Polygon' ? [json.coordinates as Line[]] : json.type === 'MultiPolygon' ? (json.coordinates as Line[][]) : [];
  return list.map((rings) => rings.map((r) => tidy(r, 4)).filter((r): r is Line => r !== null)).filter((rings) => rings.length > 0);
}

/** The pieces GEOS left (every border is cut at every node) joined end to end where only two meet. */
function merged(pieces: Line[]): Line[] {
  const key = (p: Position) => `${p[0]},${p[1]}`;
  const ends = new Map<string, number[]>();
  pieces.forEach((l, i) => {
    for (const p of [l[0]!, l[l.length - 1]!]) ends.set(key(p), [...(ends.get(key(p)) ?? []), i]);
  });
  const used = new Set<number>();
  const out: Line[] = [];
  const extend = (line: Line) => {
    for (;;) {
      const next = (ends.get(key(line[line.length - 1]!)) ?? []).filter((i) => !used.has(i));
      if (next.length !== 1 || (ends.get(key(line[line.length - 1]!)) ?? []).length !== 2) return;
      const i = next[0]!;
      used.add(i);
      const piece = pieces[i]!;
      const forward = key(piece[0]!) === key(line[line.length - 1]!);
      line.push(...(forward ? piece : [...piece].reverse()).slice(1));
    }
  };
  pieces.forEach((piece, i) => {
    if (used.has(i)) return;
    used.add(i);
    const line = [...piece];
    extend(line);
    line.reverse();
    extend(line);
    out.push(line);
  });
  return out;
}

function lines(geometry: gdal.Geometry): Line[] {
  const json = JSON.parse(geometry.toJSON()) as { type: string; coordinates: unknown };
  const list = json.type === 'LineString' ? [json.coordinates as Line] : json.type === 'MultiLineString' ? (json.coordinates as Line[]) : [];
  return merged(list)
    .map((l) => tidy(l, 2))
    .filter((l): l is Line => l !== null);
}

const dataset = gdal.open(input);
const countries = dataset.layers.get('countries');
let land: gdal.Geometry | null = null;
let outlines: gdal.Geometry | null = null;
for (const feature of countries.features) {
  const geometry = feature.getGeometry();
  if (!geometry) continue;
  land = land ? land.union(geometry) : geometry.clone();
  const boundary = geometry.boundary();
  outlines = outlines ? outlines.union(boundary) : boundary;
}
if (!land || !outlines) throw new Error(`no countries in ${input}`);
const borders = outlines.difference(land.boundary());

const collection = {
  type: 'FeatureCollection',
  // Made from Natural Earth (public domain): https://www.naturalearthdata.com/
  features: [
    { type: 'Feature', properties: { layer: 'land' }, geometry: { type: 'MultiPolygon', coordinates: polygons(land) } },
    { type: 'Feature', properties: { layer: 'boundaries' }, geometry: { type: 'MultiLineString', coordinates: lines(borders) } },
  ],
};
const text = JSON.stringify(collection);
writeFileSync(output, `${text}\n`);
console.log(`${path.relative(repo, output)}: ${(text.length / 1024).toFixed(0)} KB`);
