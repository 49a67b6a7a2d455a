import { count, h } from '../dom.js';
import { crsByCode } from './crs.js';

/** Width, height, bands, CRS (code, name and unit), pixel size of a raster; unknown keys are shown as they come. */
export function rasterFacts(raster: Record<string, unknown>): HTMLElement {
  const fact = (term: string, value: string | HTMLElement) => h('div', null, h('dt', null, term), h('dd', null, value));
  const { width, height, bands, crs, geotransform, ...rest } = raster as {
    width?: number;
    height?: number;
    bands?: { type: string; no_data: number | null }[];
    crs?: string | null;
    geotransform?: number[] | null;
  } & Record<string, unknown>;
  return h(
    'dl',
    { class: 'facts', 'data-testid': 'raster' },
    width !== undefined && height !== undefined ? fact('Size', `${count(width)} × ${count(height)} pixels`) : null,
    Array.isArray(bands)
      ? fact(
          'Bands',
          `${bands.length}: ${[...new Set(bands.map((b) => b.type))].join(', ')}${bands.some((b) => b.no_data !== null) ? `, no data ${bands.find((b) => b.no_data !== null)!.no_data}` : ''}`,
        )
      : null,
    fact('CRS', crs ? crsByCode(crs) : 'Not set'),
    Array.isArray(geotransform) && geotransform.length === 6
      ? [fact('Pixel size', `${geotransform[1]} × ${Math.abs(geotransform[5]!)}`), fact('Origin', `${geotransform[0]}, ${geotransform[3]}`)]
      : null,
    Object.entries(rest).map(([k, v]) => fact(k, typeof v === 'object' ? JSON.stringify(v) : String(v))),
  );
}
