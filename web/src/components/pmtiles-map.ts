import 'leaflet/dist/leaflet.css';
import { VectorTile } from '@mapbox/vector-tile';
import * as L from 'leaflet';
import { PbfReader } from 'pbf';
import { FetchSource, PMTiles, TileType } from 'pmtiles';
import { addBasemap } from './map/basemap.js';
import { coordinateReadout, zoomToLayerControl } from './map/controls.js';
import type { MapOptions } from './map-view.js';

/*
 * A PMTiles output on a Leaflet map, offline: the `pmtiles` library reads the Workspace's download
 * in place by HTTP byte ranges (the API answers 206: its header and root directory first, then
 * each tile the map shows), whatever the archive's size, and each vector tile is decoded
 * (@mapbox/vector-tile) and drawn on a canvas tile. Zooms past the archive's highest are drawn
 * from its highest tiles, enlarged.
 */

const COLOURS = ['#0b57d0', '#b3261e', '#146c2e', '#8a4b08', '#6a1b9a', '#00696d'];

function drawTile(canvas: HTMLCanvasElement, data: ArrayBuffer, layerColours: Map<string, string>): number {
  const tile = new VectorTile(new PbfReader(new Uint8Array(data)));
  const ctx = canvas.getContext('2d')!;
  let drawn = 0;
  for (const [name, layer] of Object.entries(tile.layers)) {
    if (!layerColours.has(name)) layerColours.set(name, COLOURS[layerColours.size % COLOURS.length]!);
    const colour = layerColours.get(name)!;
    const scale = canvas.width / layer.extent;
    ctx.strokeStyle = colour;
    ctx.fillStyle = `${colour}55`;
    ctx.lineWidth = 1.5;
    for (let i = 0; i < layer.length; i++) {
      const feature = layer.feature(i);
      const rings = feature.loadGeometry();
      ctx.beginPath();
      for (const ring of rings) {
        if (feature.type === 1) {
          for (const p of ring) {
            ctx.moveTo(p.x * scale + 3, p.y * scale);
            ctx.arc(p.x * scale, p.y * scale, 3, 0, Math.PI * 2);
          }
          continue;
        }
        ring.forEach((p, j) => {
          if (j === 0) ctx.moveTo(p.x * scale, p.y * scale);
          else ctx.lineTo(p.x * scale, p.y * scale);
        });
        if (feature.type === 3) ctx.closePath();
      }
      if (feature.type === 1) {
        ctx.fillStyle = colour;
        ctx.fill();
        ctx.fillStyle = `${colour}55`;
      } else if (feature.type === 3) {
        ctx.fill('evenodd');
        ctx.stroke();
      } else ctx.stroke();
      drawn++;
    }
  }
  return drawn;
}

export interface PmtilesMapHandle {
  dispose(): void;
  /** Tile layer names, each with the colour it is drawn in. */
  layers: Map<string, string>;
}

export async function renderPmtilesMap(container: HTMLElement, url: string, options: MapOptions): Promise<PmtilesMapHandle> {
  // The session cookie goes with each range request (same origin).
  const archive = new PMTiles(new FetchSource(url, new Headers(), 'same-origin'));
  const header = await archive.getHeader().catch((error: Error) => {
    throw new Error(`The tiles could not be read: ${error.message}`);
  });
  if (header.tileType !== TileType.Mvt) throw new Error('The archive holds no vector tiles');
  const map = L.map(container, { attributionControl: false, zoomSnap: 0.25, keyboard: true, maxZoom: Math.max(header.maxZoom + 4, 18) });
  container.setAttribute('aria-label', options.label);
  container.setAttribute('role', 'region');
  addBasemap(map, options.basemap);
  L.control.scale({ imperial: false }).addTo(map);
  // The tileset's layers, from its metadata (tippecanoe lists them), each with its colour.
  const layerColours = new Map<string, string>();
  const metadata = (await archive.getMetadata().catch(() => null)) as { vector_layers?: { id?: string }[] } | null;
  for (const layer of metadata?.vector_layers ?? []) if (layer.id) layerColours.set(layer.id, COLOURS[layerColours.size % COLOURS.length]!);
  const tiles = new (
    L.GridLayer.extend({
      createTile(coords: L.Coords, done: (error: Error | undefined, tile: HTMLElement) => void) {
        const canvas = document.createElement('canvas');
        const size = this.getTileSize() as L.Point;
        canvas.width = size.x;
        canvas.height = size.y;
        archive
          .getZxy(coords.z, coords.x, coords.y)
          .then((found) => {
            if (found) canvas.dataset.features = String(drawTile(canvas, found.data, layerColours));
            done(undefined, canvas);
          })
          .catch((error: Error) => done(error, canvas));
        return canvas;
      },
    }) as new (
      options: L.GridLayerOptions,
    ) => L.GridLayer
  )({ minNativeZoom: header.minZoom, maxNativeZoom: header.maxZoom, minZoom: header.minZoom });
  tiles.addTo(map);
  const bounds = L.latLngBounds([header.minLat, header.minLon], [header.maxLat, header.maxLon]);
  const zoomToLayer = () => {
    if (bounds.isValid() && !bounds.getNorthEast().equals(bounds.getSouthWest())) map.fitBounds(bounds, { padding: [16, 16], maxZoom: header.maxZoom });
    else map.setView([header.centerLat, header.centerLon], Math.max(header.minZoom, header.centerZoom));
  };
  zoomToLayer();
  zoomToLayerControl(zoomToLayer).addTo(map);
  coordinateReadout(map).addTo(map);
  const observer = new ResizeObserver(() => map.invalidateSize());
  observer.observe(container);
  return {
    layers: layerColours,
    dispose() {
      observer.disconnect();
      map.remove();
    },
  };
}
