import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../test/support/decider.js';
import { emptyPipeline } from './contents.js';
import { workspaceDecider, type WorkspaceCommand, type WorkspaceEvent } from './workspace.js';

const at = new Date('2026-01-01T00:00:00Z');
const { state, decide } = deciderSpec(workspaceDecider);

const created: WorkspaceEvent = {
  type: 'WorkspaceCreated',
  data: {
    workspace_id: 'ws_1',
    owner_id: 'usr_a',
    filename: 'a.geojson',
    size: 10,
    origin: { kind: 'upload' },
    inspection: { dataset_type: 'vector', format: 'GeoJSON', driver: 'GeoJSON', layers: [], raster: null, crs: null, warnings: [] },
    dataset: { path: 'dataset/a.geojson', open_options: [], driver: null, assumed_crs: null },
    at: at.toISOString(),
    expires_at: new Date(at.getTime() + 3_600_000).toISOString(),
  },
};
const request = { output_format: 'GPKG', target_crs: null, layers: [] };
const start = (conversionId: string, actorId = 'usr_a'): WorkspaceCommand => ({
  type: 'StartConversion',
  workspaceId: 'ws_1',
  actorId,
  conversionId,
  request,
  at,
});
const started = (conversionId: string): WorkspaceEvent => ({
  type: 'WorkspaceConversionStarted',
  data: { workspace_id: 'ws_1', conversion_id: conversionId, request, pipeline: emptyPipeline, at: at.toISOString() },
});
const output = { format: 'GPKG', filename: 'a.gpkg', size: 1, media_type: null, layers: ['a'], file: 'outputs/cv_1/a.gpkg' };
const converted = (conversionId: string): WorkspaceEvent => ({
  type: 'WorkspaceConverted',
  data: { workspace_id: 'ws_1', conversion_id: conversionId, output, at: at.toISOString() },
});

describe('workspace decider: conversions recorded by a workflow', () => {
  it('starts a conversion for the owner only; another user gets job_not_found', () => {
    expect(decide([created], start('cv_1'))).toEqual([started('cv_1')]);
    expect(() => decide([created], start('cv_1', 'usr_b'))).toThrow(/not found/);
  });

  it('records a retried start, completion or failure once (activities are retried)', () => {
    expect(decide([created, started('cv_1')], start('cv_1'))).toEqual([]);
    const complete: WorkspaceCommand = { type: 'CompleteConversion', workspaceId: 'ws_1', conversionId: 'cv_1', output, at };
    expect(decide([created, started('cv_1')], complete)).toEqual([converted('cv_1')]);
    expect(decide([created, started('cv_1'), converted('cv_1')], complete)).toEqual([]);
    const fail: WorkspaceCommand = { type: 'FailConversion', workspaceId: 'ws_1', conversionId: 'cv_1', error: { code: 'x', message: 'y' }, at };
    expect(decide([created, started('cv_1'), converted('cv_1')], fail)).toEqual([]);
  });

  it('keeps the last good output when a later conversion fails', () => {
    const failed: WorkspaceEvent = {
      type: 'WorkspaceConversionFailed',
      data: { workspace_id: 'ws_1', conversion_id: 'cv_2', error: { code: 'conversion_failed', message: 'no' }, at: at.toISOString() },
    };
    const after = state([created, started('cv_1'), converted('cv_1'), started('cv_2'), failed]);
    expect(after).toMatchObject({ status: 'failed', output, conversionId: 'cv_2' });
    expect(state([created, started('cv_1'), { ...failed, data: { ...failed.data, conversion_id: 'cv_1' } }])).toMatchObject({ status: 'failed', output: null });
  });

  it('ignores the late outcome of a superseded conversion', () => {
    const late: WorkspaceCommand = { type: 'CompleteConversion', workspaceId: 'ws_1', conversionId: 'cv_1', output, at };
    expect(decide([created, started('cv_1'), started('cv_2')], late)).toEqual([]);
  });

  it('refuses to start once the Workspace has expired', () => {
    const later = new Date(at.getTime() + 3_600_001);
    expect(() => decide([created], { ...start('cv_1'), at: later } as WorkspaceCommand)).toThrow(/expired/);
  });
});
