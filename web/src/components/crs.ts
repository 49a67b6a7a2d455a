/**
 * A coordinate reference system as users need to see it before choosing units: its code, its
 * name and the unit of its coordinates ("EPSG:2263 · NAD83 / New York Long Island (ftUS) · US
 * survey foot"). Layers and previews carry `crs_info`; a code a Job or an operation names is
 * looked up with GET /crs/{code} (once per code and page load).
 */
import { get } from '../api.js';
import { h } from '../dom.js';
import type { CrsInfo } from '../types.js';

/** "EPSG:2263 · NAD83 / New York Long Island (ftUS) · US survey foot"; the bare label without info; "—" without either. */
export function crsText(label: string | null | undefined, info: CrsInfo | null | undefined): string {
  if (!info) return label || '—';
  const code = info.code ?? label ?? null;
  // A CRS without an authority code is labelled by its WKT or PROJ text: the name says more.
  const parts = [code && code.length <= 40 ? code : null, info.name, info.unit].filter((p): p is string => !!p);
  return parts.length ? parts.join(' · ') : label || '—';
}

/** The same as an element: the code in monospace, the unit set apart. */
export function crsView(label: string | null | undefined, info: CrsInfo | null | undefined): HTMLElement {
  const node = h('span', { class: 'crs', 'data-crs': info?.code ?? label ?? '' });
  if (!info) {
    node.append(label || '—');
    return node;
  }
  const code = info.code ?? (label && label.length <= 40 ? label : null);
  if (code) node.append(h('code', null, code));
  if (info.name) node.append(code ? ' · ' : '', info.name);
  if (info.unit) node.append(code || info.name ? ' · ' : '', h('span', { class: 'crs-unit' }, info.unit));
  return node;
}

const known = new Map<string, Promise<CrsInfo | null>>();

/** Name and unit of an authority code (EPSG:2056, an OGC URN); null when the server does not know it. */
export function lookupCrs(code: string): Promise<CrsInfo | null> {
  const key = code.trim().toUpperCase();
  // Only codes: WKT and PROJ strings are shown as they were given.
  if (!/^[A-Z][A-Z0-9_-]{0,31}:[A-Z0-9_.-]{1,32}$/.test(key) && !/^URN:OGC:DEF:CRS/.test(key)) return Promise.resolve(null);
  let found = known.get(key);
  if (!found) {
    found = get<CrsInfo>(`/crs/${encodeURIComponent(code.trim())}`).catch(() => null);
    known.set(key, found);
  }
  return found;
}

/** A CRS named by its code, its name and unit filled in when the server answers. */
export function crsByCode(code: string): HTMLElement {
  const node = crsView(code, null);
  void lookupCrs(code).then((info) => {
    if (info) node.replaceChildren(...Array.from(crsView(code, info).childNodes));
  });
  return node;
}
