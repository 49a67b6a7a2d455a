/**
 * The map is Leaflet, loaded only when a map is first drawn (a separate chunk), so the first
 * page stays small. No tiles by default (the server may be offline): the features are drawn on
 * a plain background with a scale bar, fitted to their bounds. A basemap can be configured with
 * <meta name="svc-basemap" content="https://…/{z}/{x}/{y}.png"> in index.html.
 */
import type { FeatureCollection } from '../types.js';

export interface MapHandle {
  dispose(): void;
}

export async function drawMap(container: HTMLElement, geojson: FeatureCollection, label: string): Promise<MapHandle> {
  const { renderLeafletMap } = await import('./leaflet-map.js');
  const basemap = document.querySelector<HTMLMetaElement>('meta[name="svc-basemap"]')?.content || null;
  return renderLeafletMap(container, geojson, { label, basemap });
}

/** A PMTiles output on a map (its own chunk, loaded on demand like the map). */
export async function drawPmtiles(container: HTMLElement, url: string, label: string) {
  const { renderPmtilesMap } = await import('./pmtiles-map.js');
  const basemap = document.querySelector<HTMLMetaElement>('meta[name="svc-basemap"]')?.content || null;
  return renderPmtilesMap(container, url, { label, basemap });
}
