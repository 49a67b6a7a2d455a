import { existsSync } from 'node:fs';
import path from 'node:path';
import type { DatasetRef } from '../datasets/dataset-files.js';
import { gdal, openAs, withDataset, type SpatialReference } from '../gdal/gdal.js';
import { sourceSrs } from '../crs.js';
import { runGdalTool } from '../gdal/gdal-tool.js';
import { datasetBytes, CHEAP_SCAN_BYTES } from '../datasets/inspect.js';
import { fieldTypeLabel, gdalFieldType, geometryTypeCode, splitGeometryType } from '../gdal/labels.js';
import { quoteIdent } from './sql-guard.js';
import type { ProcessingWarning } from '../warnings.js';
import { runGeoStep } from './geo-step.js';
import { refuseGeometryOperations } from './pipeline-check.js';
import { compileOperation, type ValidatedOperation } from './catalog.js';
import {
  crsSpecOf,
  invalid,
  pickName,
  selectAll,
  type FieldSpec,
  type GeometrySpec,
  type Family,
  type Probe,
  type Relation,
  type AttachedLayer,
  type CompileContext,
  type CrsSpec,
  type Source,
} from './relation.js';

/*
 * Runs the catalog's operations on one layer. Each operation becomes a SELECT in GDAL's SQLite
 * dialect (SpatiaLite functions) wrapped around the previous one, so a whole chain is one query
 * and one pass over the data, executed by ogr2ogr in the sandbox. Only explode_multipart needs
 * ogr2ogr's -explodecollections, which ends a stage: the chain then continues from that stage's
 * GeoPackage. The output layer is created beforehand with the schema the chain implies, because
 * GDAL would otherwise guess a computed column's type from its first row (NULL → String).
 */

export interface OperationRun {
  input: DatasetRef;
  layer: string;
  /** GeoPackage receiving the result (created if missing) and the layer name to write. */
  output: { path: string; layer: string };
  /** Folder for intermediate GeoPackages; also the only folder the sandbox may write. */
  workDir: string;
  /** Read only the first n features (transform previews). */
  sampleFeatures?: number;
  /** Write at most n features per stage (previews: a query may make rows from nothing, e.g. WITH RECURSIVE). */
  outputLimit?: number;
  /** Largest GeoPackage a stage may write (previews). */
  maxBytes?: number;
  /** Stops the stage running (a preview's deadline, a closed request). */
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The datasets of the caller's other Workspaces that operations name (workspace_id). */
  datasets?: DatasetResolver;
}

/** The limits of one GDAL stage of a run. */
function stageLimits(run: OperationRun) {
  return {
    ...(run.timeoutMs ? { timeoutMs: run.timeoutMs } : {}),
    ...(run.maxBytes ? { maxFileBytes: run.maxBytes } : {}),
    ...(run.signal ? { signal: run.signal } : {}),
  };
}

/** ogr2ogr's -limit for a run's stage output, when it has one. */
const outputLimitArgs = (run: OperationRun) => (run.outputLimit ? ['-limit', String(run.outputLimit)] : []);

/** Finds the dataset of another Workspace of the caller; refuses ids that are not the caller's. */
export type DatasetResolver = (workspaceId: string) => Promise<DatasetRef>;

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

function openOptionArgs(ref: DatasetRef): string[] {
  return ref.openOptions.flatMap((o) => ['-oo', o]);
}

/** Reads what the SQL needs to know about the layer: columns, geometry, CRS and extent. */
async function describeSource(ref: DatasetRef, layerName: string, sample?: number): Promise<Relation> {
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

/** Finds a column by exact name, else by a unique case-insensitive match (SQLite names are case-insensitive). */
async function createOutputLayer(target: { path: string; layer: string }, rel: Relation): Promise<void> {
  // gdal-async's async create needs explicit raster sizes even for a vector dataset.
  const ds = existsSync(target.path) ? await openAs('GPKG', target.path, 'r+') : await gdal.drivers.get('GPKG').createAsync(target.path, 0, 0, 0, 'Unknown');
  try {
    const fid = pickName(['fid', 'ogc_fid', 'gpkg_fid'], rel.fields);
    const srs = rel.geom && rel.crs ? gdal.SpatialReference.fromWKT(rel.crs.wkt) : null;
    const options = [`FID=${fid}`, ...(rel.geom ? [`GEOMETRY_NAME=${rel.geomName}`] : [])];
    // GEOMETRY: geo/datasets/geometry-types declares the type the rows turn out to have once written.
    const type = rel.geom ? geometryTypeCode({ base: 0, z: rel.geom.z, m: rel.geom.m }) : gdal.wkbNone;
    const layer = await ds.layers.createAsync(target.layer, srs, type, options);
    for (const f of rel.fields) {
      const defn = new gdal.FieldDefn(f.name, gdalFieldType(f.type));
      if (f.width > 0) defn.width = f.width;
      if (f.precision > 0) defn.precision = f.precision;
      layer.fields.add(defn);
    }
  } finally {
    ds.close();
  }
}

async function runStage(rel: Relation, target: { path: string; layer: string }, run: OperationRun, explode: boolean): Promise<void> {
  await createOutputLayer(target, rel);
  await runGdalTool(
    'ogr2ogr',
    [
      '--config',
      'OGR_SQLITE_SYNCHRONOUS',
      'OFF',
      '-update',
      '-append',
      '-f',
      'GPKG',
      target.path,
      rel.source.ref.path,
      ...openOptionArgs(rel.source.ref),
      '-dialect',
      'SQLite',
      '-sql',
      rel.sql,
      '-nln',
      target.layer,
      ...(explode ? ['-explodecollections'] : []),
      ...outputLimitArgs(run),
    ],
    { readable: [rel.source.ref.path], writable: [run.workDir], ...stageLimits(run) },
    `The transformation of layer ${run.layer} failed`,
  );
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

/**
 * Copies a layer another operation reads into the stage's folder as a GeoPackage, in the
 * relation's CRS (ogr2ogr in the sandbox, like every read of user data here), and says what it
 * holds. A layer without a CRS is taken as being in the relation's, with a warning.
 */
async function attachLayer(
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

/** Starts a new relation from a stage's output layer. */
function continueFrom(rel: Relation, stagePath: string, table: string): Relation {
  const source: Source = { ref: { path: stagePath, openOptions: [], warnings: [] }, table, geomColumn: rel.geom ? rel.geomName : null };
  return { ...rel, source, sql: `SELECT ${selectAll(rel).join(', ') || 'NULL AS "_empty"'} FROM ${quoteIdent(table)}` };
}

/**
 * Applies validated operations, in order, to one layer of the input and writes the result as a
 * layer of the output GeoPackage. The input is only read. Answers the warnings of the operations
 * (a distance in degrees, features repaired), each naming the layer.
 */
export async function runOperations(operations: ValidatedOperation[], run: OperationRun): Promise<ProcessingWarning[]> {
  const warnings: ProcessingWarning[] = [];
  const warn = (w: Omit<ProcessingWarning, 'layer'>) => void warnings.push({ ...w, layer: run.layer });
  let rel = await describeSource(run.input, run.layer, run.sampleFeatures);
  refuseGeometryOperations(operations, { name: run.layer, has_geometry: rel.geom !== null });
  const probe: Probe = async (current, sql) => {
    const { stdout } = await runGdalTool(
      'ogrinfo',
      ['-ro', '-q', current.source.ref.path, ...openOptionArgs(current.source.ref), '-dialect', 'SQLite', '-sql', sql],
      // The work folder too: attached layers live there.
      { readable: [current.source.ref.path, run.workDir], writable: [], ...stageLimits(run), timeoutMs: run.timeoutMs ?? 5 * 60_000 },
      'The expression failed',
    );
    return /\bt \([A-Za-z0-9]+\) = (-?[\w.]+)/.exec(stdout)?.[1] ?? null;
  };
  let stage = 0;
  const stagePath = () => path.join(run.workDir, `stage-${++stage}-${Date.now().toString(36)}.gpkg`);
  // Other layers go into a GeoPackage with the relation so far, so that one SQLite database
  // holds every table the next SQL reads, whatever the drivers of the datasets.
  const attach: CompileContext['attach'] = async (current, layers, workspaceId, op) => {
    if (workspaceId && !run.datasets)
      throw invalid(`${op}: workspace_id names another Workspace, which only Workspace pipelines can read`, { parameter: 'workspace_id' });
    const ref = workspaceId ? await run.datasets!(workspaceId) : run.input;
    const written = stagePath();
    await runStage(current, { path: written, layer: 'stage' }, run, false);
    const out: AttachedLayer[] = [];
    for (const [i, layer] of layers.entries()) {
      const said = await attachLayer(ref, layer, { file: written, table: `attached_${i + 1}` }, current.crs, op, run);
      for (const w of said.warnings) warn(w);
      out.push(said.layer);
    }
    return { rel: continueFrom(current, written, 'stage'), layers: out };
  };
  for (const op of operations) {
    const compiled = await compileOperation(op, rel, { layer: run.layer, probe, warn, attach });
    if (compiled.explode) {
      const written = stagePath();
      await runStage(rel, { path: written, layer: 'stage' }, run, true);
      rel = continueFrom(compiled.rel, written, 'stage');
    } else if (compiled.geoStep) {
      // The SQL so far is written out, the geo step works on that, and the chain goes on from its output.
      const written = stagePath();
      await runStage(rel, { path: written, layer: 'stage' }, run, false);
      const stepped = stagePath();
      const said = await runGeoStep(
        compiled.geoStep,
        { input: written, layer: 'stage', output: stepped, outLayer: 'stage', geometryName: rel.geomName, workDir: run.workDir, ...timing(run) },
        op.type,
      );
      for (const w of said) warn(w);
      rel = continueFrom(compiled.rel, stepped, 'stage');
    } else {
      rel = compiled.rel;
    }
  }
  await runStage(rel, run.output, run, false);
  return warnings;
}

const timing = (run: OperationRun) => (run.timeoutMs ? { timeoutMs: run.timeoutMs } : {});

export interface SqlRun extends OperationRun {
  /** Checked SQL (geo/operations/sql-guard checkSelectSql) against the relation `source`. */
  sql: string;
}

/**
 * Runs the user's SELECT against `source` (the chosen layer, geometry column named geometry) and
 * writes its result as the output layer. Column types follow GDAL's rules for SQL results.
 */
export async function runUserSql(run: SqlRun): Promise<void> {
  const rel = await describeSource(run.input, run.layer, run.sampleFeatures);
  const cte = `source AS (${rel.sql})`;
  const m = /^WITH(\s+RECURSIVE)?\s+/i.exec(run.sql);
  const sql = m ? `WITH${m[1] ?? ''} ${cte}, ${run.sql.slice(m[0].length)}` : `WITH ${cte} ${run.sql}`;
  const args = [
    '--config',
    'OGR_SQLITE_SYNCHRONOUS',
    'OFF',
    ...(existsSync(run.output.path) ? ['-update'] : []),
    '-f',
    'GPKG',
    run.output.path,
    run.input.path,
    ...openOptionArgs(run.input),
    '-dialect',
    'SQLite',
    '-sql',
    sql,
    '-nln',
    run.output.layer,
    '-lco',
    'GEOMETRY_NAME=geometry',
    ...outputLimitArgs(run),
  ];
  // A geometry passed through keeps its CRS; GDAL cannot always tell it from the SQL result.
  if (rel.crs) args.push('-a_srs', rel.crs.wkt);
  await runGdalTool('ogr2ogr', args, { readable: [run.input.path], writable: [run.workDir], ...stageLimits(run) }, `The SQL on layer ${run.layer} failed`);
}
