import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { runOgr2ogr, transferFailure } from '../shared/files/ogr2ogr.js';
import { vectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { apiGet, apiSend, findDataset, pageUrl, type Dataset, type GeonodeAccess } from './api.js';

/*
 * Delivering to GeoNode through its upload API: the output is written as a GeoPackage and
 * posted to /api/v2/uploads/upload (a new dataset, or `action=replace` with `resource_pk` for an
 * existing one's data); the import runs asynchronously in GeoNode, so the execution request it
 * returns is polled until it finishes; then the title and abstract are set with a PATCH of the
 * dataset. A new dataset's file is named after the delivery id, so a retried delivery finds the
 * dataset its first attempt created (by name) instead of uploading a second one.
 */

export interface GeonodeTarget {
  dataset?: string;
  title: string;
  abstract?: string;
}

interface ExecutionRequest {
  status?: string;
  output_params?: { resources?: { id?: number | string; detail_url?: string }[] };
  log?: string | null;
}

const POLL_MS = 1000;

const slugOf = (title: string) =>
  title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40) || 'dataset';

async function writeGeopackage(input: DeliverInput, name: string, ctx: ConnectorContext): Promise<{ file: string; features: number | null }> {
  const layer = await vectorInput(input, ctx.workDir);
  const file = path.join(ctx.workDir, `${name}.gpkg`);
  await runOgr2ogr(
    {
      args: ['-f', 'GPKG', file, layer.ref.path, layer.layer, ...layer.ref.openOptions.flatMap((o) => ['-oo', o]), '-nln', name, '-nlt', layer.nlt],
      label: `writing ${name} as a GeoPackage`,
    },
    ctx,
    transferFailure([], 'Writing the output as a GeoPackage for GeoNode', {}),
  );
  return { file, features: layer.features };
}

async function waitForExecution(access: GeonodeAccess, executionId: string, ctx: ConnectorContext): Promise<(string | number)[]> {
  for (;;) {
    const got = await apiGet<{ request?: ExecutionRequest }>(access, ['executionrequest', executionId], ctx);
    const status = got.request?.status;
    if (status === 'finished') return (got.request?.output_params?.resources ?? []).map((r) => r.id!).filter((id) => id !== undefined);
    if (status === 'failed') {
      throw new ConnectorError(
        'invalid_data',
        `GeoNode at ${publicUrl(access.base)} could not import the upload (execution ${executionId})${got.request?.log ? `: ${String(got.request.log).slice(0, 300)}` : ''}`,
        { execution_id: executionId },
        false,
      );
    }
    ctx.progress?.({ message: `GeoNode import ${status ?? 'pending'}` });
    await sleep(POLL_MS, undefined, { signal: ctx.signal }).catch(() => {
      throw new ConnectorError(
        'timeout',
        `GeoNode at ${publicUrl(access.base)} had not finished importing (execution ${executionId}) when the delivery was stopped`,
        { execution_id: executionId },
      );
    });
  }
}

export async function uploadDataset(access: GeonodeAccess, target: GeonodeTarget, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> {
  let replacing: Dataset | null = null;
  if (target.dataset) {
    replacing = await findDataset(access, target.dataset, ctx);
    if (!replacing)
      throw new ConnectorError(
        'not_found',
        `GeoNode at ${publicUrl(access.base)} has no dataset ${target.dataset} to replace`,
        { dataset: target.dataset },
        false,
      );
  }
  const tag = createHash('sha256').update(input.deliveryId).digest('hex').slice(0, 10);
  const name = replacing?.name ?? `${slugOf(target.title)}_${tag}`;
  // A retry of a new dataset's delivery: the first attempt's dataset has that name.
  let pk: string | number | null = replacing ? replacing.pk : ((await findDataset(access, name, ctx))?.pk ?? null);
  let features: number | null = null;
  if (replacing || pk === null) {
    const gpkg = await writeGeopackage(input, name, ctx);
    features = gpkg.features;
    const form = new FormData();
    form.append('base_file', new Blob([await readFile(gpkg.file)], { type: 'application/geopackage+sqlite3' }), `${name}.gpkg`);
    form.append('store_spatial_files', 'true');
    if (replacing) {
      form.append('action', 'replace');
      form.append('resource_pk', String(replacing.pk));
    } else {
      form.append('action', 'upload');
    }
    const started = await apiSend<{ execution_id?: string }>(access, 'POST', ['uploads', 'upload'], { form }, ctx);
    if (!started.execution_id)
      throw new ConnectorError('invalid_response', `GeoNode at ${publicUrl(access.base)} accepted the upload without an execution_id`, {}, false);
    const resources = await waitForExecution(access, String(started.execution_id), ctx);
    pk = replacing ? replacing.pk : (resources[0] ?? null);
    if (pk === null)
      throw new ConnectorError(
        'invalid_response',
        `GeoNode at ${publicUrl(access.base)} finished the import without naming the dataset it made`,
        { execution_id: started.execution_id },
        false,
      );
  }
  const patched = await apiSend<{ dataset?: Dataset }>(
    access,
    'PATCH',
    ['datasets', String(pk)],
    { json: { title: target.title, ...(target.abstract ? { abstract: target.abstract } : {}) } },
    ctx,
  );
  const dataset = patched.dataset ?? (await findDataset(access, String(pk), ctx));
  return {
    target: {
      url: publicUrl(access.base),
      dataset_id: Number.isFinite(Number(pk)) ? Number(pk) : pk,
      name: dataset?.alternate ?? dataset?.name ?? name,
      title: target.title,
      page_url: dataset ? pageUrl(access, dataset) : null,
      action: replacing ? 'replace' : 'upload',
    },
    ...(features !== null ? { rows_written: features } : {}),
  };
}
