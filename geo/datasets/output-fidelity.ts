import { DomainError } from '../../domain/errors.js';
import type { ProcessingWarning } from '../warnings.js';
import type { FormatEntry } from './formats.js';
import { gdal } from '../gdal/gdal.js';

/*
 * What a conversion may ask of a format and what the format forces on the data:
 * - GDAL creation options (dataset: -dsco / -co, layer: -lco), checked against the driver's own
 *   option list, so a misspelt or impossible option is a 400 naming the allowed ones rather than
 *   a GDAL warning nobody reads;
 * - GDAL's warnings while writing (a Shapefile's ten-character field names, a DateTime stored as
 *   a Date, a value cut to 254 characters), turned into warnings with the mapping;
 * - an output file name that is not the upload's own.
 */

export interface CreationOptions {
  /** Dataset (file) creation options: ogr2ogr -dsco, gdal_translate -co. */
  dataset?: Record<string, string | number | boolean>;
  /** Layer creation options: ogr2ogr -lco (vector formats only). */
  layer?: Record<string, string | number | boolean>;
}

interface OptionSpec {
  name: string;
  type: string;
  values: string[];
  description: string;
}

const badParameter = (message: string, details: Record<string, unknown>) => new DomainError('invalid_parameter', message, details);

/** The options a GDAL driver lists for creating a dataset or a layer (its XML option list, parsed). */
export function driverOptions(driverId: string, kind: 'dataset' | 'layer'): OptionSpec[] {
  const md = gdal.drivers.get(driverId).getMetadata() as Record<string, string>;
  const xml = (kind === 'dataset' ? md.DMD_CREATIONOPTIONLIST : md.DS_LAYER_CREATIONOPTIONLIST) ?? '';
  const out: OptionSpec[] = [];
  for (const m of xml.matchAll(/<Option\b([^>]*?)(?:\/>|>([\s\S]*?)<\/Option>)/g)) {
    const attrs = new Map([...m[1]!.matchAll(/(\w+)=(['"])([\s\S]*?)\2/g)].map((a) => [a[1]!.toLowerCase(), a[3]!]));
    const name = attrs.get('name');
    if (!name) continue;
    const values = [...(m[2] ?? '').matchAll(/<Value\b[^>]*>([^<]*)<\/Value>/g)].map((v) => v[1]!.trim());
    out.push({ name, type: (attrs.get('type') ?? 'string').toLowerCase(), values, description: attrs.get('description') ?? '' });
  }
  return out;
}

const BOOLEAN = ['YES', 'NO', 'TRUE', 'FALSE', 'ON', 'OFF', '1', '0'];

function checkValue(option: OptionSpec, raw: string, where: string, format: FormatEntry): string {
  const value = raw.trim();
  const details = { parameter: where, option: option.name, value: raw.slice(0, 200), format: format.id };
  if (option.type === 'boolean' && !BOOLEAN.includes(value.toUpperCase())) {
    throw badParameter(`${where}.${option.name} is a yes/no option of ${format.name}: use YES or NO`, { ...details, allowed_values: ['YES', 'NO'] });
  }
  if ((option.type === 'int' || option.type === 'integer') && !/^-?\d+$/.test(value)) {
    throw badParameter(`${where}.${option.name} takes an integer`, details);
  }
  if (option.type === 'float' && !Number.isFinite(Number(value))) throw badParameter(`${where}.${option.name} takes a number`, details);
  if (option.type === 'string-select' && option.values.length && !option.values.some((v) => v.toUpperCase() === value.toUpperCase())) {
    throw badParameter(`${where}.${option.name} must be one of ${option.values.join(', ')} for ${format.name}`, { ...details, allowed_values: option.values });
  }
  // Paths and URLs would make GDAL read or fetch something that is not the data being converted.
  if (/^\s*[/\\]|:\/\/|\/vsi|\.\.[/\\]/i.test(value)) {
    throw badParameter(`${where}.${option.name}: file paths and URLs are not accepted as option values`, details);
  }
  return value;
}

/**
 * Checks creation options against the driver's lists and answers the GDAL arguments for them
 * (-dsco / -lco for ogr2ogr, -co for gdal_translate). A name the driver does not list, or a
 * value outside an option's allowed set, is a 400 naming what is allowed.
 */
export function creationOptionArgs(format: FormatEntry, options: CreationOptions | null | undefined): { dataset: string[]; layer: string[] } {
  const out = { dataset: [] as string[], layer: [] as string[] };
  if (!options) return out;
  for (const kind of ['dataset', 'layer'] as const) {
    const given = options[kind];
    if (!given || Object.keys(given).length === 0) continue;
    const where = `creation_options.${kind}`;
    if (kind === 'layer' && format.kind === 'raster') {
      throw badParameter(`${where}: ${format.name} is a raster format, which has no layers; use creation_options.dataset`, {
        parameter: where,
        format: format.id,
      });
    }
    const known = driverOptions(format.id, kind);
    for (const [key, raw] of Object.entries(given)) {
      const option = known.find((o) => o.name.toUpperCase() === key.toUpperCase());
      if (!option) {
        const allowed = known.map((o) => o.name);
        throw badParameter(
          allowed.length
            ? `${where}: ${format.name} (${format.id}) has no ${kind} creation option ${JSON.stringify(key)}; it takes ${allowed.join(', ')}`
            : `${where}: ${format.name} (${format.id}) takes no ${kind} creation options`,
          { parameter: where, option: key, format: format.id, allowed_options: allowed },
        );
      }
      const value = checkValue(option, typeof raw === 'boolean' ? (raw ? 'YES' : 'NO') : String(raw), where, format);
      const flag = kind === 'layer' ? '-lco' : format.kind === 'raster' ? '-co' : '-dsco';
      out[kind].push(flag, `${option.name}=${value}`);
    }
  }
  return out;
}

/** Removes our own default for an option the caller set (the caller's value wins). */
export function withoutOverridden(args: string[], flag: string, overrides: string[]): string[] {
  const names = new Set<string>();
  for (let i = 0; i + 1 < overrides.length; i += 2) if (overrides[i] === flag) names.add(overrides[i + 1]!.split('=')[0]!.toUpperCase());
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag && i + 1 < args.length && names.has(args[i + 1]!.split('=')[0]!.toUpperCase())) {
      i++;
      continue;
    }
    out.push(args[i]!);
  }
  return out;
}

/**
 * GDAL's warnings while writing, as warnings a client can act on: renamed fields with the
 * mapping, types the format changed, values it cut; anything else GDAL said, as it said it.
 */
export function formatWarnings(lines: string[], format: FormatEntry, layer: string | undefined): ProcessingWarning[] {
  const out: ProcessingWarning[] = [];
  const at = layer ? { layer } : {};
  const renamed: Record<string, string> = {};
  const retyped = new Set<string>();
  const unwritten = new Map<string, number[]>();
  for (const line of lines) {
    // What the tool says about itself, not about the data.
    if (/^Progress turned off/.test(line)) continue;
    const w = /Value .* of field (.+?) of feature (\d+) not successfully written/.exec(line);
    if (w) {
      const rows = unwritten.get(w[1]!) ?? [];
      rows.push(Number(w[2]) + 1);
      unwritten.set(w[1]!, rows);
      continue;
    }
    let m = /Normalized\/laundered field name: '(.+)' to '(.+)'/.exec(line);
    if (m) {
      renamed[m[1]!] = m[2]!;
      continue;
    }
    m = /Field (.+) create(?:d)? as date field, though DateTime requested/.exec(line);
    if (m) {
      retyped.add(m[1]!);
      out.push({
        code: 'type_changed',
        message: `${format.name} has no date-and-time type: field ${m[1]} is stored as a date, its times are lost`,
        ...at,
        details: { field: m[1], from: 'DateTime', to: 'Date' },
      });
      continue;
    }
    m = /does not natively support (\w+) type for field (.+?)\. Misconversion/.exec(line);
    if (m) {
      out.push({
        code: 'type_changed',
        message: `${format.name} has no ${m[1]} type: field ${m[2]} is converted to the nearest type it has`,
        ...at,
        details: { field: m[2], from: m[1] },
      });
      continue;
    }
    m = /Value '[\s\S]*' of field (.+?) has been truncated to (\d+) characters/.exec(line);
    if (m) {
      out.push({
        code: 'value_truncated',
        message: `${format.name} holds at most ${m[2]} characters per value: longer values of field ${m[1]} are cut`,
        ...at,
        details: { field: m[1], max_characters: Number(m[2]) },
      });
      continue;
    }
    out.push({ code: 'format_warning', message: `${format.name}: ${line}`, ...at, details: { gdal: line } });
  }
  for (const [field, rows] of unwritten) {
    out.push({
      code: 'value_not_written',
      message: `${format.name} could not hold ${rows.length} value${rows.length === 1 ? '' : 's'} of field ${field} (too wide for the field; rows ${rows.slice(0, 10).join(', ')}${rows.length > 10 ? ', …' : ''}): they are empty in the output`,
      ...at,
      details: { field, rows: rows.slice(0, 50), count: rows.length },
    });
  }
  if (Object.keys(renamed).length) {
    out.unshift({
      code: 'field_renamed',
      message: `${format.name} field names are limited, ${Object.keys(renamed).length === 1 ? 'one was' : 'some were'} renamed: ${Object.entries(renamed)
        .map(([a, b]) => `${a} → ${b}`)
        .join(', ')}`,
      ...at,
      details: { mapping: renamed },
    });
  }
  // GDAL names a retyped field by its new name: report the field as the data has it, once, under
  // its most precise warning.
  const original = new Map(Object.entries(renamed).map(([from, to]) => [to, from]));
  for (const w of out) {
    if (w.code !== 'type_changed' || w.details?.to === undefined) continue;
    const written = String(w.details.field);
    const field = original.get(written) ?? written;
    w.details = { ...w.details, field, ...(field !== written ? { written_as: written } : {}) };
    w.message = w.message.replace(`field ${written} `, `field ${field} `);
    retyped.add(field);
  }
  return out.filter((w) => !(w.code === 'type_changed' && w.details?.to === undefined && retyped.has(String(w.details?.field))));
}

/**
 * The output's file name stem: the requested one, unless the download would carry the uploaded
 * file's own name (a Shapefile converted from `nybb_16a.zip` to Shapefile): then the format is
 * added (`nybb_16a-shapefile.zip`), so the two files never pass for each other.
 */
export function outputStem(stem: string, candidates: string[], avoid: string | null | undefined, format: FormatEntry): string {
  if (!avoid) return stem;
  const taken = avoid.toLowerCase();
  if (!candidates.some((c) => c.toLowerCase() === taken)) return stem;
  const slug = (format.id === 'ESRI Shapefile' ? 'shapefile' : format.id.toLowerCase()).replace(/[^a-z0-9]+/g, '-');
  return `${stem}-${slug}`;
}
