import * as L from 'leaflet';
import type { Basemap } from '../map-view.js';
import naturalEarthUrl from './natural-earth-110m.geojson';

/*
 * What the maps draw under the data. By default the Natural Earth 1:110m land and country
 * boundaries shipped with the app (scripts/make-basemap.ts; ≈115 KB, fetched from this server with
 * the first map, so it works offline); with SVC_BASEMAP_URL, the operator's tile service, the
 * shipped one staying available in the layer switch.
 */

type GeoJsonData = Parameters<typeof L.geoJSON>[0];
let naturalEarth: Promise<GeoJsonData> | null = null;

/** The shipped basemap, fetched once per page load and shared by every map. */
function loadNaturalEarth(): Promise<GeoJsonData> {
  // The build names the asset relative to this chunk (both sit in assets/), not to the page.
  naturalEarth ??= fetch(new URL(naturalEarthUrl, import.meta.url), { credentials: 'same-origin' }).then((response) => {
    if (!response.ok) throw new Error(`The basemap could not be loaded (HTTP ${response.status})`);
    return response.json() as Promise<GeoJsonData>;
  });
  naturalEarth.catch(() => {
    naturalEarth = null;
  });
  return naturalEarth;
}

const LAND = '#f3f0e8';
const BORDER = '#9b958a';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The Natural Earth layer: land filled, borders as thin lines, on a canvas of its own pane under the data. */
function naturalEarthLayer(map: L.Map): L.LayerGroup {
  const group = L.layerGroup([], { attribution: 'Natural Earth' } as L.LayerOptions);
  const renderer = L.canvas({ pane: 'basemap', padding: 0.5 });
  loadNaturalEarth()
    .then((data) => {
      L.geoJSON(data, {
        pane: 'basemap',
        interactive: false,
        // A canvas renderer: two large features, redrawn cheaply while panning.
        ...({ renderer } as object),
        style: (feature) =>
          feature?.properties?.layer === 'land' ? { stroke: false, fill: true, fillColor: LAND, fillOpacity: 1 } : { color: BORDER, weight: 0.8, fill: false },
      }).addTo(group);
      map.getContainer().dataset.naturalEarth = 'drawn';
    })
    .catch(() => {
      // No basemap: the data is still drawn, on the plain background.
      map.getContainer().dataset.naturalEarth = 'failed';
    });
  return group;
}

/** Adds the basemap (and a switch between the ones there are) to `map`. */
export function addBasemap(map: L.Map, setting: Basemap): void {
  map.createPane('basemap').style.zIndex = '150';
  L.control.attribution({ prefix: false }).addTo(map);
  const container = map.getContainer();
  const shipped = naturalEarthLayer(map);
  const none = L.layerGroup();
  const tiles = setting ? L.tileLayer(setting.url, { maxZoom: 19, subdomains: 'abc', attribution: escapeHtml(setting.attribution) }) : null;
  // The switch's entries, in order, each with the name the page's data-basemap says.
  const entries: [label: string, layer: L.Layer, name: string][] = tiles
    ? [
        ['Tiles', tiles, 'tiles'],
        ['Natural Earth (offline)', shipped, 'natural-earth'],
      ]
    : [['Natural Earth', shipped, 'natural-earth']];
  entries.push(['None', none, 'none']);
  const choices = Object.fromEntries(entries.map(([label, layer]) => [label, layer]));
  const names = new Map(entries.map(([, layer, name]) => [layer, name]));
  const first = entries[0]!;
  map.on('baselayerchange', (event: L.LayersControlEvent) => {
    container.dataset.basemap = names.get(event.layer) ?? '';
  });
  first[1].addTo(map);
  container.dataset.basemap = first[2];
  L.control.layers(choices, undefined, { position: 'topright' }).addTo(map);
}
