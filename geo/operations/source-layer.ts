import type { DatasetRef } from '../gdal/dataset-ref.js';
import { gdal, withDataset, type SpatialReference } from '../gdal/gdal.js';
import { fieldTypeLabel, splitGeometryType } from '../gdal/labels.js';
import { sourceSrs } from '../crs.js';
import { datasetBytes, CHEAP_SCAN_BYTES } from '../datasets/inspect.js';
import { crsSpecOf, invalid, pickName, type Family, type FieldSpec, type GeometrySpec, type Relation, type Source } from './relation.js';
import { quoteIdent } from './sql-guard.js';

/* The layer a run starts from, as the SQL needs to know it: columns, geometry, CRS and extent in longitude/latitude. */

/** Reads what the SQL needs to know about the layer: columns, geometry, CRS and extent. */
export async function describeSource(ref: DatasetRef, layerName: string, sample?: number): Promise<Relation> {
  const cheap = (await datasetBytes(ref.path)) <= CHEAP_SCAN_BYTES;
  return withDataset(ref, async (ds) => {
    let layer;
    try {
      layer = ds.layers.get(layerName);
    } catch {
      layer = null;
    }
    if (!layer) throw invalid(`No layer named ${JSON.stringify(layerName)}`);
    const fields: FieldSpec[] = [];
    layer.fields.forEach((f) => {
      fields.push({ name: f.name, type: fieldTypeLabel(f.type), width: f.width, precision: f.precision });
    });
    const geom = geometryFromCode(layer.geomType);
    const srs = geom ? sourceSrs(layer, ref) : null;
    const crs = srs ? crsSpecOf(srs) : null;
    let extentLonLat: Relation['extentLonLat'] = null;
    if (geom && srs) {
      for (const force of cheap ? [false, true] : [false]) {
        try {
          const e = layer.getExtent(force);
          extentLonLat = toLonLat([e.minX, e.minY, e.maxX, e.maxY], srs);
          break;
        } catch {
          // not available cheaply, or empty
        }
      }
    }
    const source: Source = { ref, table: layer.name, geomColumn: geom ? layer.geomColumn || 'GEOMETRY' : null };
    // `geometry`, as the previews label it, so SQL and expressions use the name users see.
    const geomName = pickName(['geometry', 'geom', 'geometry_', '_geometry'], fields);
    const columns = fields.map((f) => quoteIdent(f.name));
    if (geom) columns.push(`${quoteIdent(source.geomColumn!)} AS ${quoteIdent(geomName)}`);
    const sql = `SELECT ${columns.join(', ') || 'NULL AS "_empty"'} FROM ${quoteIdent(layer.name)}${sample ? ` LIMIT ${Math.floor(sample)}` : ''}`;
    return { source, sql, fields, geomName, geom, crs, extentLonLat };
  });
}

function geometryFromCode(code: number): GeometrySpec | null {
  const { base, z, m } = splitGeometryType(code);
  if (base === 100) return null;
  const families: Record<number, Family> = {
    1: 'point',
    2: 'line',
    3: 'polygon',
    4: 'point',
    5: 'line',
    6: 'polygon',
    7: 'collection',
    8: 'line',
    9: 'line',
    10: 'polygon',
    11: 'line',
    12: 'polygon',
    17: 'polygon',
  };
  return { family: families[base] ?? null, z, m };
}

function toLonLat(extent: [number, number, number, number], srs: SpatialReference): [number, number, number, number] | null {
  if (!extent.every(Number.isFinite) || extent[0] > extent[2]) return null;
  if (srs.isGeographic()) return extent;
  try {
    const ct = new gdal.CoordinateTransformation(srs, srs.cloneGeogCS());
    const xs: number[] = [];
    const ys: number[] = [];
    const [x0, y0, x1, y1] = extent;
    for (const [x, y] of [
      [x0, y0],
      [x1, y0],
      [x0, y1],
      [x1, y1],
      [(x0 + x1) / 2, (y0 + y1) / 2],
    ] as const) {
      const p = ct.transformPoint(x, y);
      xs.push(p.x);
      ys.push(p.y);
    }
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  } catch {
    return null;
  }
}
