import { ApiError, get, plainMessage, query } from '../../api.js';
import { count, h, replace, uid } from '../../dom.js';
import type { DataPreview, Layer, SpatialPreview } from '../../types.js';
import { crsText } from '../crs.js';
import { dataTable } from '../data-table.js';
import { drawMap, type Basemap, type Bounds, type MapHandle } from '../map-view.js';
import { warningsList } from '../warnings-list.js';

interface PreviewColumn {
  kind: 'original' | 'transformed';
  node: HTMLElement;
  mapBox: HTMLElement;
  mapNote: HTMLElement;
  table: HTMLElement;
  map: MapHandle | null;
}

function previewColumn(kind: PreviewColumn['kind'], title: string): PreviewColumn {
  const headingId = uid('preview');
  const mapBox = h('div', { class: 'map', 'data-testid': `${kind}-map` });
  const mapNote = h('p', { class: 'map-note', role: 'status' });
  const table = h('div', { class: 'preview-data', 'data-testid': `${kind}-table` });
  const node = h(
    'section',
    { class: 'preview-column', 'aria-labelledby': headingId, 'data-testid': kind },
    h('h3', { id: headingId }, title),
    mapBox,
    mapNote,
    table,
  );
  return { kind, node, mapBox, mapNote, table, map: null };
}

export interface PreviewPanel {
  node: HTMLElement;
  /** Reloads the original and/or the transformed column for a layer. */
  load(layer: Layer | undefined, which: 'both' | 'transformed', pipelineActive: boolean): void;
  dispose(): void;
}

/** The extent holding both. */
const extentOf = (a: Bounds, b: Bounds): Bounds => [
  [Math.min(a[0][0], b[0][0]), Math.min(a[0][1], b[0][1])],
  [Math.max(a[1][0], b[1][0]), Math.max(a[1][1], b[1][1])],
];

/**
 * The original and the transformed samples of a layer side by side: a map (spatial preview,
 * EPSG:4326) and a table (data preview) each. A newer load supersedes one still in flight.
 * While both maps are drawn they move together (a box on the panel unlinks them), so the same
 * place is compared before and after.
 */
export function previewPanel(workspacePath: string, basemap: Promise<Basemap>): PreviewPanel {
  const original = previewColumn('original', 'Original');
  const transformed = previewColumn('transformed', 'Transformed');
  let token = 0;
  let disposed = false;
  const stale = (t: number) => t !== token || disposed;
  let unlink: (() => void) | null = null;
  const linkBox = h('input', { type: 'checkbox', id: uid('link-maps'), checked: true, 'data-testid': 'link-maps' });
  const linkRow = h('div', { class: 'check-line link-maps', hidden: true }, linkBox, h('label', { for: linkBox.id }, 'Move both maps together'));

  /** Links the two maps when both are drawn and the box is ticked; the transformed map takes the original's view. */
  function relink() {
    unlink?.();
    unlink = null;
    linkRow.hidden = !(original.map && transformed.map);
    if (original.map && transformed.map && linkBox.checked) unlink = original.map.link(transformed.map);
  }
  linkBox.addEventListener('change', relink);

  /**
   * A newly drawn pair of linked maps opens on both layers' extent, so a buffer that grows the
   * features stays whole in view; "Zoom to the layer" goes back there.
   */
  function frame() {
    const a = original.map?.bounds();
    const b = transformed.map?.bounds();
    const together = linkBox.checked && a && b ? extentOf(a, b) : null;
    transformed.map?.showExtent(together);
    original.map?.showExtent(together);
  }

  function clearMap(column: PreviewColumn) {
    column.map?.dispose();
    column.map = null;
    relink();
    replace(column.mapBox);
  }

  async function fill(column: PreviewColumn, layer: Layer, t: number) {
    const original = column.kind === 'original';
    const dataPath = original ? 'data-preview' : 'transform-preview';
    const mapPath = original ? 'spatial-preview' : 'transform-spatial-preview';
    clearMap(column);
    column.mapBox.hidden = false;
    column.mapBox.classList.add('loading');
    column.mapNote.textContent = 'Loading the map…';
    replace(column.table, h('p', { class: 'empty' }, 'Loading rows…'));
    const data = get<DataPreview>(`${workspacePath}/${dataPath}${query({ layer: layer.name, limit: 100 })}`);
    const spatial = layer.has_geometry ? get<SpatialPreview>(`${workspacePath}/${mapPath}${query({ layer: layer.name })}`) : null;
    data.catch(() => undefined);
    spatial?.catch(() => undefined);

    if (!spatial) {
      column.mapBox.hidden = true;
      column.mapNote.textContent = 'No geometry: this layer is a table, so there is nothing to draw on a map.';
    } else {
      try {
        const s = await spatial;
        if (stale(t)) return;
        column.mapBox.classList.remove('loading');
        const handle = await drawMap(column.mapBox, s.geojson, {
          label: `${original ? 'Original' : 'Transformed'} map of ${layer.name}`,
          basemap: await basemap.catch(() => null),
        });
        if (stale(t)) {
          handle.dispose();
          return;
        }
        column.map = handle;
        relink();
        frame();
        const total = s.feature_count === null ? `${count(s.returned_count)}${s.truncated ? '+' : ''}` : count(s.feature_count);
        // The data's own CRS with its name and unit: what "source" units of an operation mean.
        const crs =
          s.source_crs && s.source_crs !== s.preview_crs
            ? `, reprojected for the map from ${crsText(s.source_crs, s.source_crs_info)} to WGS 84`
            : ` (${crsText(s.source_crs ?? s.preview_crs, s.source_crs_info)})`;
        column.mapNote.textContent = `${count(s.returned_count)} of ${total} features drawn${crs}.`;
      } catch (error) {
        if (stale(t)) return;
        column.mapBox.classList.remove('loading');
        column.mapBox.hidden = true;
        column.mapNote.textContent =
          error instanceof ApiError && error.code === 'invalid_parameter' ? `No map: ${error.message}` : `The map could not be loaded: ${plainMessage(error)}`;
      }
    }
    try {
      const d = await data;
      if (stale(t)) return;
      // What the pipeline did to this layer that the sample cannot show (units, repairs, CRS).
      replace(column.table, warningsList(d.warnings, 'preview-warnings'), dataTable(d, `${layer.name}, ${column.kind}`));
    } catch (error) {
      if (stale(t)) return;
      replace(column.table, h('p', { class: 'alert', role: 'alert' }, plainMessage(error)));
    }
  }

  const node = h(
    'section',
    { class: 'card', 'aria-labelledby': 'preview-title', id: 'preview' },
    h('h2', { id: 'preview-title' }, 'Preview'),
    h(
      'p',
      { class: 'hint' },
      'Samples of the selected layer: up to 100 rows and 2,000 features on the map, in WGS 84 (the readout in a map’s corner gives the position under the pointer). Convert gives the full result.',
    ),
    linkRow,
    h('div', { class: 'side-by-side' }, original.node, transformed.node),
  );

  return {
    node,
    load(layer, which, pipelineActive) {
      const t = ++token;
      if (!layer) return;
      if (which === 'both') void fill(original, layer, t);
      if (pipelineActive) void fill(transformed, layer, t);
      else {
        clearMap(transformed);
        transformed.mapBox.hidden = true;
        transformed.mapNote.textContent = '';
        replace(transformed.table, h('p', { class: 'empty' }, 'No pipeline yet: apply one above to see its result next to the original.'));
      }
    },
    dispose() {
      disposed = true;
      unlink?.();
      clearMap(original);
      clearMap(transformed);
    },
  };
}
