import 'leaflet/dist/leaflet.css';
import * as L from 'leaflet';
import type { FeatureCollection } from '../types.js';

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

export function renderLeafletMap(container: HTMLElement, geojson: FeatureCollection, options: { label: string; basemap: string | null }) {
  const map = L.map(container, { attributionControl: !!options.basemap, zoomSnap: 0.25, worldCopyJump: false, keyboard: true });
  container.setAttribute('aria-label', options.label);
  container.setAttribute('role', 'region');
  if (options.basemap) L.tileLayer(options.basemap, { maxZoom: 19 }).addTo(map);
  L.control.scale({ imperial: false }).addTo(map);
  const style = { color: '#0b57d0', weight: 2, opacity: 0.95, fillColor: '#4c8df6', fillOpacity: 0.35 };
  const layer = L.geoJSON(geojson as unknown as Parameters<typeof L.geoJSON>[0], {
    style: () => style,
    pointToLayer: (_feature, latlng) => L.circleMarker(latlng, { ...style, radius: 5, fillOpacity: 0.8 }),
    onEachFeature: (feature, featureLayer) => featureLayer.bindPopup(popup(feature.properties as Record<string, unknown> | null), { maxWidth: 320 }),
  }).addTo(map);
  const bounds = layer.getBounds();
  if (bounds.isValid()) {
    // A single point has empty bounds: give it a neighbourhood.
    if (bounds.getNorthEast().equals(bounds.getSouthWest())) map.setView(bounds.getCenter(), 14);
    else map.fitBounds(bounds, { padding: [16, 16] });
  } else {
    map.setView([0, 0], 1);
  }
  // The container may have been laid out after creation (side-by-side columns).
  const observer = new ResizeObserver(() => map.invalidateSize());
  observer.observe(container);
  return {
    dispose() {
      observer.disconnect();
      map.remove();
    },
  };
}
