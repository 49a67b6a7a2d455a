import 'leaflet/dist/leaflet.css';
import * as L from 'leaflet';
import type { FeatureCollection } from '../types.js';
import { addBasemap } from './map/basemap.js';
import { coordinateReadout, zoomToLayerControl } from './map/controls.js';
import type { Bounds, MapHandle, MapOptions } from './map-view.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function popup(properties: Record<string, unknown> | null): string {
  const entries = Object.entries(properties ?? {}).slice(0, 20);
  if (!entries.length) return '<em>No attributes</em>';
  return `<table class="popup-table">${entries
    .map(
      ([k, v]) =>
        `<tr><th scope="row">${escapeHtml(k)}</th><td>${escapeHtml(v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))}</td></tr>`,
    )
    .join('')}</table>`;
}

/** The Leaflet map behind each handle, for linking two of them. */
const maps = new WeakMap<MapHandle, L.Map>();
/** Each map's links: a map that goes away ends them, on both sides. */
const links = new WeakMap<L.Map, Set<() => void>>();
const linksOf = (map: L.Map) => {
  const set = links.get(map) ?? new Set<() => void>();
  links.set(map, set);
  return set;
};

const toBounds = (b: L.LatLngBounds): Bounds => [
  [b.getSouth(), b.getWest()],
  [b.getNorth(), b.getEast()],
];

/** Shows `bounds` whole; a single point (empty bounds) gets a neighbourhood. */
function showBounds(map: L.Map, bounds: L.LatLngBounds, animate = true) {
  if (!bounds.isValid()) map.setView([0, 0], 1, { animate });
  else if (bounds.getNorthEast().equals(bounds.getSouthWest())) map.setView(bounds.getCenter(), 14, { animate });
  else map.fitBounds(bounds, { padding: [16, 16], animate });
}

export function renderLeafletMap(container: HTMLElement, geojson: FeatureCollection, options: MapOptions): MapHandle {
  const map = L.map(container, { attributionControl: false, zoomSnap: 0.25, zoomDelta: 0.5, worldCopyJump: false, keyboard: true });
  container.setAttribute('aria-label', options.label);
  container.setAttribute('role', 'region');
  addBasemap(map, options.basemap);
  L.control.scale({ imperial: false }).addTo(map);
  const style = { color: '#0b57d0', weight: 2, opacity: 0.95, fillColor: '#4c8df6', fillOpacity: 0.35 };
  const layer = L.geoJSON(geojson as unknown as Parameters<typeof L.geoJSON>[0], {
    style: () => style,
    pointToLayer: (_feature, latlng) => L.circleMarker(latlng, { ...style, radius: 5, fillOpacity: 0.8 }),
    onEachFeature: (feature, featureLayer) => featureLayer.bindPopup(popup(feature.properties as Record<string, unknown> | null), { maxWidth: 320 }),
  }).addTo(map);
  const layerBounds = layer.getBounds();
  let home = layerBounds;
  // The button animates; a view set by the page (a resize, a newly linked pair) jumps.
  const zoomToLayer = (animate = true) => showBounds(map, home, animate);
  zoomToLayer(false);
  zoomToLayerControl(() => zoomToLayer()).addTo(map);
  coordinateReadout(map).addTo(map);
  // The container may have been laid out after creation (side-by-side columns, a narrower
  // screen): until the user moves the map, a new size fits the layer again, so the map opens on
  // the layer's extent, not on a view computed for a box of another size.
  let touched = false;
  for (const event of ['pointerdown', 'wheel', 'keydown', 'touchstart']) container.addEventListener(event, () => (touched = true), { passive: true });
  const observer = new ResizeObserver(() => {
    map.invalidateSize();
    if (!touched) zoomToLayer(false);
  });
  observer.observe(container);

  const handle: MapHandle = {
    dispose() {
      for (const unlink of [...linksOf(map)]) unlink();
      observer.disconnect();
      map.remove();
      // Leaflet 1.9 ends a zoom animation on a 250 ms timer that remove() does not cancel; on a map
      // left mid-zoom (the page changed) it would throw reading the removed panes
      // (Leaflet/Leaflet#9575). Marked as ended, the timer finds nothing to do.
      (map as unknown as { _animatingZoom: boolean })._animatingZoom = false;
    },
    zoomToLayer,
    bounds: () => (layerBounds.isValid() ? toBounds(layerBounds) : null),
    fitBounds: (b) => showBounds(map, L.latLngBounds(b)),
    showExtent(b) {
      home = b ? L.latLngBounds(b) : layerBounds;
      zoomToLayer(false);
    },
    link(other) {
      const otherMap = maps.get(other);
      if (!otherMap || otherMap === map) return () => undefined;
      // One flag for both directions: the view set on the follower does not echo back.
      let syncing = false;
      const follow = (from: L.Map, to: L.Map) => () => {
        if (syncing) return;
        syncing = true;
        try {
          to.setView(from.getCenter(), from.getZoom(), { animate: false });
        } finally {
          syncing = false;
        }
      };
      const leads = follow(map, otherMap);
      const follows = follow(otherMap, map);
      map.on('move zoom', leads);
      otherMap.on('move zoom', follows);
      leads();
      const unlink = () => {
        map.off('move zoom', leads);
        otherMap.off('move zoom', follows);
        linksOf(map).delete(unlink);
        linksOf(otherMap).delete(unlink);
      };
      linksOf(map).add(unlink);
      linksOf(otherMap).add(unlink);
      return unlink;
    },
  };
  maps.set(handle, map);
  return handle;
}
