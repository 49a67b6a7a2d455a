import { existsSync } from 'node:fs';
import type { DatasetRef } from '../gdal/dataset-ref.js';
import { gdal, openAs } from '../gdal/gdal.js';
import { runGdalTool } from '../gdal/gdal-tool.js';
import { gdalFieldType, geometryTypeCode } from '../gdal/labels.js';
import { pickName, selectAll, type Relation, type Source } from './relation.js';
import { quoteIdent } from './sql-guard.js';

/*
 * One stage of a run: the relation's SQL written by ogr2ogr (in the sandbox) into a GeoPackage
 * layer created beforehand with the schema the chain implies, and the chain continued from it.
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

/** Finds the dataset of another Workspace of the caller; refuses ids that are not the caller's. */
export type DatasetResolver = (workspaceId: string) => Promise<DatasetRef>;

/** The limits of one GDAL stage of a run. */
export function stageLimits(run: OperationRun) {
  return {
    ...(run.timeoutMs ? { timeoutMs: run.timeoutMs } : {}),
    ...(run.maxBytes ? { maxFileBytes: run.maxBytes } : {}),
    ...(run.signal ? { signal: run.signal } : {}),
  };
}

/** ogr2ogr's -limit for a run's stage output, when it has one. */
export const outputLimitArgs = (run: OperationRun) => (run.outputLimit ? ['-limit', String(run.outputLimit)] : []);

export const timing = (run: OperationRun) => (run.timeoutMs ? { timeoutMs: run.timeoutMs } : {});

export function openOptionArgs(ref: DatasetRef): string[] {
  return ref.openOptions.flatMap((o) => ['-oo', o]);
}

export async function runStage(rel: Relation, target: { path: string; layer: string }, run: OperationRun, explode: boolean): Promise<void> {
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

/** Starts a new relation from a stage's output layer. */
export function continueFrom(rel: Relation, stagePath: string, table: string): Relation {
  const source: Source = { ref: { path: stagePath, openOptions: [], warnings: [] }, table, geomColumn: rel.geom ? rel.geomName : null };
  return { ...rel, source, sql: `SELECT ${selectAll(rel).join(', ') || 'NULL AS "_empty"'} FROM ${quoteIdent(table)}` };
}
