import { existsSync } from 'node:fs';
import path from 'node:path';
import { runGdalTool } from '../gdal/gdal-tool.js';
import type { ProcessingWarning } from '../warnings.js';
import { attachLayer } from './attach-layer.js';
import { compileOperation, type ValidatedOperation } from './catalog.js';
import { runGeoStep } from './geo-step.js';
import { refuseGeometryOperations } from './pipeline-check.js';
import { invalid, type AttachedLayer, type CompileContext, type Probe, type Relation } from './relation.js';
import { quoteIdent } from './sql-guard.js';
import { describeSource } from './source-layer.js';
import { continueFrom, openOptionArgs, outputLimitArgs, runStage, stageLimits, timing, type OperationRun } from './stage.js';

export type { DatasetResolver, OperationRun } from './stage.js';

/*
 * Runs the catalog's operations on one layer. Each operation becomes a SELECT in GDAL's SQLite
 * dialect (SpatiaLite functions) wrapped around the previous one, so a whole chain is one query
 * and one pass over the data, executed by ogr2ogr in the sandbox. Only explode_multipart needs
 * ogr2ogr's -explodecollections, which ends a stage: the chain then continues from that stage's
 * GeoPackage. The output layer is created beforehand with the schema the chain implies, because
 * GDAL would otherwise guess a computed column's type from its first row (NULL → String).
 */

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
  // Operations whose output can hold geometries their repair could not make valid.
  const repairing = new Set<string>();
  for (const op of operations) {
    const compiled = await compileOperation(op, rel, { layer: run.layer, probe, warn, attach });
    if (compiled.checkValidity) repairing.add(op.type);
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
  if (repairing.size && rel.geom) {
    const invalidRows = await invalidFeatures(continueFrom(rel, run.output.path, run.output.layer), probe);
    if (invalidRows.count) {
      const ops = [...repairing].join(', ');
      warn({
        code: 'geometry_invalid',
        message: `${ops}: ${invalidRows.count} results could not be made valid (rows ${invalidRows.rows.join(', ')}${invalidRows.count > invalidRows.rows.length ? ', …' : ''})`,
        details: { operation: ops, features: invalidRows.rows },
      });
    }
  }
  return warnings;
}

const LISTED = 20;

/** The features of a written layer that are still invalid: how many, and the row numbers of the first ones. */
async function invalidFeatures(rel: Relation, probe: Probe): Promise<{ count: number; rows: number[] }> {
  const g = quoteIdent(rel.geomName);
  const numbered = `SELECT ROW_NUMBER() OVER () AS "_row", ${g} FROM (${rel.sql})`;
  const bad = `SELECT "_row" FROM (${numbered}) WHERE ${g} IS NOT NULL AND ST_IsValid(${g}) = 0`;
  const count = Number((await probe(rel, `SELECT count(*) AS t FROM (${bad})`)) ?? 0);
  if (!count) return { count: 0, rows: [] };
  // The probe answers one value: the row numbers joined by underscores.
  const listed = await probe(rel, `SELECT group_concat("_row", '_') AS t FROM (${bad} LIMIT ${LISTED})`);
  return { count, rows: (listed ?? '').split('_').filter(Boolean).map(Number) };
}

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
