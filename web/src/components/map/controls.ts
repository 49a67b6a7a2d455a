import * as L from 'leaflet';

/** A button under the zoom buttons that fits the view to the layer. */
export function zoomToLayerControl(onClick: () => void): L.Control {
  const control = new L.Control({ position: 'topleft' });
  control.onAdd = () => {
    const bar = L.DomUtil.create('div', 'leaflet-bar map-tools');
    const button = L.DomUtil.create('button', 'map-button', bar);
    button.type = 'button';
    button.title = 'Zoom to the layer';
    button.setAttribute('aria-label', 'Zoom to the layer');
    button.setAttribute('data-testid', 'zoom-to-layer');
    // Four corners pointing out: "fit"
    button.innerHTML =
      '<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false"><path d="M1 5V1h4M11 1h4v4M15 11v4h-4M5 15H1v-4" fill="none" stroke="currentColor" stroke-width="2"/></svg>';
    L.DomEvent.disableClickPropagation(bar);
    L.DomEvent.on(button, 'click', (event) => {
      L.DomEvent.preventDefault(event);
      onClick();
    });
    return bar;
  };
  return control;
}

/** Decimals worth showing at a zoom: about a pixel's size. */
const decimals = (zoom: number) => Math.min(6, Math.max(2, Math.ceil(Math.log10((2 ** zoom * 256) / 360)) + 1));

const format = (value: number, digits: number, positive: string, negative: string) => `${Math.abs(value).toFixed(digits)}° ${value < 0 ? negative : positive}`;

/**
 * The coordinates under the pointer (the centre of the view when the pointer is elsewhere, which
 * is also what keyboard users move), in longitude and latitude (WGS 84, the map's coordinates).
 */
export function coordinateReadout(map: L.Map): L.Control {
  const control = new L.Control({ position: 'bottomright' });
  let text: HTMLElement;
  const show = (where: 'Pointer' | 'Centre', latlng: L.LatLng) => {
    const p = latlng.wrap();
    const digits = decimals(map.getZoom());
    // The CRS and unit named with the figures: the data's own CRS may be another (the note under the map says which).
    text.textContent = `${where}: ${format(p.lat, digits, 'N', 'S')}, ${format(p.lng, digits, 'E', 'W')} (WGS 84, degrees)`;
    text.dataset.lon = String(p.lng);
    text.dataset.lat = String(p.lat);
  };
  const centre = () => show('Centre', map.getCenter());
  const pointer = (event: L.LeafletMouseEvent) => show('Pointer', event.latlng);
  control.onAdd = () => {
    text = L.DomUtil.create('div', 'map-readout');
    text.setAttribute('data-testid', 'coordinates');
    text.title = 'Latitude and longitude (WGS 84)';
    map.on('mousemove', pointer);
    map.on('mouseout moveend', centre);
    // The map has its first view by now (the caller fits it before adding controls).
    queueMicrotask(centre);
    return text;
  };
  control.onRemove = () => {
    map.off('mousemove', pointer);
    map.off('mouseout moveend', centre);
  };
  return control;
}
