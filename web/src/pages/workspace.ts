/**
 * The Workspace canvas: the inspected layers and fields, data and map previews, the pipeline
 * editor with the transformed previews side by side with the originals, convert with a format
 * picker, download and deliver. Each part is a component under components/workspace/.
 */
import { ApiError, get } from '../api.js';
import { rasterFacts } from '../components/raster-facts.js';
import { convertPanel } from '../components/workspace/convert-panel.js';
import { deliverPanel } from '../components/workspace/deliver-panel.js';
import { workspaceFacts } from '../components/workspace/facts.js';
import { layersPanel } from '../components/workspace/layers-panel.js';
import { isActive, pipelinePanel } from '../components/workspace/pipeline-panel.js';
import { previewPanel } from '../components/workspace/preview-panel.js';
import { remember } from '../components/workspace/recent.js';
import { h, titledSection } from '../dom.js';
import type { Page, PageContext } from '../router.js';
import type { Layer, Pipeline, Workspace } from '../types.js';

export { workspaceUploadPage } from './workspace-upload.js';

function unavailable(error: ApiError): Page {
  return {
    title: 'Workspace not available',
    node: h(
      'section',
      null,
      h('h1', null, 'This Workspace is not available'),
      h('p', { class: 'alert', role: 'alert' }, error.message),
      h('p', null, h('a', { class: 'button', href: '#/workspace' }, 'Upload a file')),
    ),
  };
}

export async function workspacePage({ app, params }: PageContext): Promise<Page> {
  const path = `/workspaces/${encodeURIComponent(params.id!)}`;
  let ws: Workspace;
  try {
    ws = await get<Workspace>(path);
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'job_expired' || error.code === 'job_not_found')) return unavailable(error);
    throw error;
  }
  remember(ws);
  const [catalog, formats] = await Promise.all([app.transformations(), app.formats()]);
  const flash = app.takeFlash();

  const layers = ws.layers;
  let selected: Layer | undefined = layers.find((l) => l.has_geometry) ?? layers[0];
  const isVector = ws.dataset_type === 'vector' && layers.length > 0;
  const stored: Pipeline = { layers: [], operations: [], sql: null, python: null, ...ws.pipeline } as Pipeline;
  let pipelineActive = isActive(stored);

  const facts = workspaceFacts(ws);
  const basemap = app.system().then((s) => s.basemap);
  basemap.catch(() => undefined);
  const previews = previewPanel(path, basemap);
  const vectorParts = isVector
    ? [
        layersPanel(layers, selected, (layer) => {
          selected = layer;
          previews.load(selected, 'both', pipelineActive);
        }),
        pipelinePanel({
          workspacePath: path,
          stored,
          catalog,
          layers,
          selected: () => selected,
          onApplied(active, options) {
            pipelineActive = active;
            previews.load(selected, 'transformed', pipelineActive);
            if (options?.scroll) previews.node.scrollIntoView({ block: 'start' });
          },
        }),
        previews.node,
      ]
    : null;
  if (isVector) previews.load(selected, 'both', pipelineActive);

  const node = h(
    'section',
    { class: 'canvas' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/workspace' }, 'Workspace'), ' / '),
    h('div', { class: 'page-head' }, h('h1', null, ws.filename), h('a', { class: 'button secondary', href: '#/workspace' }, 'New upload')),
    flash ? h('p', { class: 'notice', role: 'status' }, flash) : null,
    facts.node,
    ws.warnings.length
      ? h(
          'div',
          { class: 'notice' },
          h('p', null, 'Warnings from the inspection:'),
          h(
            'ul',
            null,
            ws.warnings.map((w) => h('li', null, w)),
          ),
        )
      : null,
    ws.errors.length
      ? h(
          'div',
          { class: 'alert' },
          h(
            'ul',
            null,
            ws.errors.map((e) => h('li', null, e.message)),
          ),
        )
      : null,
    vectorParts ?? (ws.raster ? titledSection('card', 'raster', 'Raster', rasterFacts(ws.raster)) : null),
    convertPanel(path, ws, formats, basemap, (converted) => {
      ws = converted;
      facts.render(ws);
    }),
    deliverPanel(app, path),
  );

  return { title: ws.filename, node, dispose: () => previews.dispose() };
}
