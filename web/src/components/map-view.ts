/**
 * The map is Leaflet, loaded only when a map is first drawn (a separate chunk), so the first
 * page stays small. Under the data: the Natural Earth land and country boundaries the app ships
 * (loaded with the first map, no network needed), or the operator's tile service when
 * SVC_BASEMAP_URL is set (GET /system `basemap`); a layer switch on the map offers both.
 */
import type { FeatureCollection, System } from '../types.js';

export type Basemap = System['basemap'];

/** [[south, west], [north, east]] in degrees. */
export type Bounds = [[number, number], [number, number]];

export interface MapHandle {
  dispose(): void;
  /** Fits the view to the drawn features (what the map's "Zoom to the layer" button does). */
  zoomToLayer(): void;
  /** The drawn features' extent, or null when nothing was drawn. */
  bounds(): Bounds | null;
  fitBounds(bounds: Bounds): void;
  /**
   * Makes `bounds` what "Zoom to the layer" (and a resize before the user moved the map) shows,
   * and shows it: two linked maps' layers together. Null goes back to the drawn features' own.
   */
  showExtent(bounds: Bounds | null): void;
  /** Moves `other` with this map and this map with `other` (pan and zoom); returns the unlink. */
  link(other: MapHandle): () => void;
}

export interface MapOptions {
  /** The map's accessible name. */
  label: string;
  basemap: Basemap;
}

export async function drawMap(container: HTMLElement, geojson: FeatureCollection, options: MapOptions): Promise<MapHandle> {
  const { renderLeafletMap } = await import('./leaflet-map.js');
  return renderLeafletMap(container, geojson, options);
}

/** A PMTiles output on a map (its own chunk, loaded on demand like the map). */
export async function drawPmtiles(container: HTMLElement, url: string, options: MapOptions) {
  const { renderPmtilesMap } = await import('./pmtiles-map.js');
  return renderPmtilesMap(container, url, options);
}
