import type { DatasetRef } from '../gdal/dataset-ref.js';
import { runGdalTool } from '../gdal/gdal-tool.js';
import type { ProcessingWarning } from '../warnings.js';
import { invalid, type AttachedLayer, type CrsSpec, type Family, type FieldSpec, type GeometrySpec } from './relation.js';
import { quoteIdent } from './sql-guard.js';
import { openOptionArgs, type OperationRun } from './stage.js';

/* The other layers an operation reads (clip, joins, merge), copied beside the relation so far. */

/**
 * Copies a layer another operation reads into the stage's folder as a GeoPackage, in the
 * relation's CRS (ogr2ogr in the sandbox, like every read of user data here), and says what it
 * holds. A layer without a CRS is taken as being in the relation's, with a warning.
 */
export async function attachLayer(
  ref: DatasetRef,
  layer: string,
  target: { file: string; table: string },
  crs: CrsSpec | null,
  op: string,
  run: OperationRun,
): Promise<{ layer: AttachedLayer; warnings: Omit<ProcessingWarning, 'layer'>[] }> {
  const warnings: Omit<ProcessingWarning, 'layer'>[] = [];
  const timing = run.timeoutMs ? { timeoutMs: run.timeoutMs } : {};
  const read = { readable: [ref.path], writable: [], ...timing };
  const listed = await runGdalTool('ogrinfo', ['-ro', '-q', ref.path, ...openOptionArgs(ref)], read, `${op}: the dataset cannot be read`);
  const names = [...listed.stdout.matchAll(/^\d+: (.+?)(?: \([^)]*\))?$/gm)].map((m) => m[1]!);
  if (!names.includes(layer)) throw invalid(`${op}: no layer named ${JSON.stringify(layer)}; the layers are: ${names.join(', ')}`, { layer, layers: names });
  const own = parseLayerSummary((await runGdalTool('ogrinfo', ['-ro', '-so', ref.path, ...openOptionArgs(ref), layer], read, `${op}: layer ${layer}`)).stdout);
  // The CRS its coordinates are in: set on upload (or assumed, CSV), else the file's.
  const from = ref.assumedCrs && (ref.crsOverride || !own.hasSrs) ? ['-s_srs', ref.assumedCrs] : [];
  let reproject: string[] = [];
  if (crs && own.geomType) {
    if (from.length || own.hasSrs) reproject = [...from, '-t_srs', crs.wkt];
    else {
      warnings.push({
        code: 'crs_assumed',
        message: `${op}: layer ${layer} has no CRS; its coordinates are taken as being in the CRS of the layer being processed`,
        details: { operation: op, other_layer: layer },
      });
    }
  }
  const { file, table } = target;
  await runGdalTool(
    'ogr2ogr',
    ['-update', '-f', 'GPKG', file, ref.path, ...openOptionArgs(ref), layer, '-nln', table, '-lco', 'GEOMETRY_NAME=geom', '-lco', 'FID=fid', ...reproject],
    { readable: [ref.path], writable: [run.workDir], ...timing },
    `${op}: layer ${layer} cannot be read`,
  );
  const summary = parseLayerSummary(
    (await runGdalTool('ogrinfo', ['-ro', '-so', file, table], { readable: [file], writable: [], ...timing }, `${op}: layer ${layer}`)).stdout,
  );
  const geom = summary.geomType ? geometryFromLabel(summary.geomType) : null;
  return {
    layer: { table: quoteIdent(table), name: layer, fields: summary.fields, geomName: geom ? (summary.geomName ?? 'geom') : null, geom },
    warnings,
  };
}

/** Fields and geometry of a layer as `ogrinfo -so` lists them (read in the sandbox). */
function parseLayerSummary(text: string): { fields: FieldSpec[]; geomName: string | null; geomType: string | null; hasSrs: boolean } {
  const fields: FieldSpec[] = [];
  let geomName: string | null = null;
  let geomType: string | null = null;
  let hasSrs = false;
  let afterColumns = false;
  for (const line of text.split('\n')) {
    const g = /^Geometry: (.+)$/.exec(line);
    if (g) geomType = g[1]!.trim();
    if (/^Layer SRS WKT:/.test(line)) hasSrs = true;
    if (/^\(unknown\)$/.test(line.trim())) hasSrs = false;
    const c = /^Geometry Column = (.+)$/.exec(line);
    if (c) geomName = c[1]!.trim();
    if (/^(FID Column|Geometry Column) = /.test(line)) {
      afterColumns = true;
      continue;
    }
    const f = /^(.+): (\w+)(?: \((\d+)\.(\d+)\))?$/.exec(line);
    if (afterColumns && f) fields.push({ name: f[1]!, type: f[2]!, width: Number(f[3] ?? 0), precision: Number(f[4] ?? 0) });
  }
  return { fields, geomName, geomType: geomType && geomType !== 'None' ? geomType : null, hasSrs };
}

/** A GeometrySpec from ogrinfo's geometry label (Point, Multi Polygon, 3D Line String, Unknown (any)). */
function geometryFromLabel(label: string): GeometrySpec {
  const l = label.toLowerCase();
  const family: Family | null = l.includes('polygon')
    ? 'polygon'
    : l.includes('line')
      ? 'line'
      : l.includes('point')
        ? 'point'
        : l.includes('collection')
          ? 'collection'
          : null;
  return { family, z: l.includes('3d') || / z\b/.test(l), m: / m\b|measured/.test(l) };
}
