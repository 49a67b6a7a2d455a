import { DomainError } from '../errors.js';

/*
 * Run-time parameters: a Job declares named, typed parameters with defaults and uses them as
 * `{{name}}` in its source_resource, destination_target and sql; Run Now, a webhook and retries
 * pass values, checked here; the Run records the values it ran with. Pure functions: the
 * application checks selectors and SQL on what they produce.
 *
 * In source_resource and destination_target a string that is exactly `{{name}}` becomes the
 * value itself (a number stays a number); within a longer string the value is written in. In
 * sql a parameter is a value, never SQL text: `{{name}}` becomes a quoted literal ('it''s'),
 * a number, or 1/0.
 */

export const parameterTypes = ['string', 'integer', 'number', 'boolean', 'date'] as const;
export type ParameterType = (typeof parameterTypes)[number];
export type ParameterValue = string | number | boolean;

export interface ParameterDeclaration {
  name: string;
  type: ParameterType;
  /** Used when a Run is not given a value; null: a value is required. */
  default: ParameterValue | null;
  description: string | null;
  /** When set, the only values accepted. */
  choices: ParameterValue[] | null;
}

export type ParameterValues = Record<string, ParameterValue>;

export const MAX_PARAMETERS = 50;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const refuse = (path: string, message: string) =>
  new DomainError('validation_error', `Invalid request body: ${path}: ${message}`, { issues: [{ path, message }] });

/**
 * Whether a Run's values are the Job's own (each parameter at its default). The sync cursor
 * belongs to those: a Run given other values may read another resource or write another target,
 * so it reads in full and leaves the cursor alone; so does every Run of a Job with a required
 * parameter, whose values are never the same by default (docs/jobs.md, "Run-time parameters").
 */
export function usesDefaults(declarations: readonly ParameterDeclaration[], values: ParameterValues): boolean {
  return declarations.every((d) => d.default !== null && (values[d.name] === undefined || values[d.name] === d.default));
}

/** The value if it fits the type (strings of digits are accepted for numbers: query strings and CLIs send text), else null. */
export function coerce(type: ParameterType, value: unknown): ParameterValue | null {
  switch (type) {
    case 'string':
      return typeof value === 'string' && value.length <= 10_000 ? value : typeof value === 'number' ? String(value) : null;
    case 'integer': {
      const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
      return typeof n === 'number' && Number.isSafeInteger(n) ? n : null;
    }
    case 'number': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      return typeof n === 'number' && Number.isFinite(n) ? n : null;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      return value === 'true' ? true : value === 'false' ? false : null;
    case 'date': {
      if (typeof value !== 'string' || !DATE.test(value)) return null;
      const d = new Date(`${value}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value ? value : null;
    }
  }
}

const expected: Record<ParameterType, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  date: 'a date YYYY-MM-DD',
};

/** Checks the declarations of a Job body; returns them as stored (defaults and choices of the declared type). */
export function checkDeclarations(declarations: readonly ParameterDeclaration[], path = 'body.parameters'): ParameterDeclaration[] {
  if (declarations.length > MAX_PARAMETERS) throw refuse(path, `at most ${MAX_PARAMETERS} parameters`);
  const seen = new Set<string>();
  return declarations.map((d, i) => {
    const at = `${path}[${i}]`;
    if (!NAME.test(d.name)) throw refuse(`${at}.name`, 'a name of letters, digits and _ (not starting with a digit), at most 63 characters');
    if (seen.has(d.name)) throw refuse(`${at}.name`, `"${d.name}" is declared twice`);
    seen.add(d.name);
    const choices =
      d.choices?.map((c, j) => {
        const v = coerce(d.type, c);
        if (v === null) throw refuse(`${at}.choices[${j}]`, `must be ${expected[d.type]}`);
        return v;
      }) ?? null;
    if (choices && choices.length === 0) throw refuse(`${at}.choices`, 'list at least one value, or leave choices out');
    let value: ParameterValue | null = null;
    if (d.default !== null && d.default !== undefined) {
      value = coerce(d.type, d.default);
      if (value === null) throw refuse(`${at}.default`, `must be ${expected[d.type]}`);
      if (choices && !choices.includes(value)) throw refuse(`${at}.default`, 'must be one of the choices');
    }
    return { name: d.name, type: d.type, default: value, description: d.description ?? null, choices };
  });
}

/** The parameter names a value refers to as `{{name}}`, in order of appearance. */
export function placeholdersIn(value: unknown): string[] {
  const out: string[] = [];
  const visit = (v: unknown) => {
    if (typeof v === 'string') for (const m of v.matchAll(PLACEHOLDER)) out.push(m[1]!);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(value);
  return out;
}

/** Refuses `{{name}}` in a field when no parameter of that name is declared. */
export function checkReferences(declarations: readonly ParameterDeclaration[], fields: Record<string, unknown>): void {
  const names = new Set(declarations.map((d) => d.name));
  for (const [field, value] of Object.entries(fields)) {
    const unknown = placeholdersIn(value).find((n) => !names.has(n));
    if (unknown) throw refuse(`body.${field}`, `uses {{${unknown}}}, but the Job declares no parameter "${unknown}" (add it to parameters)`);
    if (field === 'sql' && typeof value === 'string' && /'[^']*\{\{[^}]*\}\}[^']*'/.test(value)) {
      throw refuse('body.sql', 'a parameter in sql is a value: write {{name}} without quotes around it (it is quoted for you)');
    }
  }
}

/**
 * The values a Run runs with: those given, checked against their declarations, and the
 * defaults for the rest. A name the Job does not declare, a value of the wrong type or outside
 * the choices, and a missing value without default are refused (422, `path` names where).
 */
export function resolveValues(
  declarations: readonly ParameterDeclaration[],
  given: Record<string, unknown> | null | undefined,
  path = 'body.parameters',
): ParameterValues {
  const values: ParameterValues = {};
  const byName = new Map(declarations.map((d) => [d.name, d]));
  for (const name of Object.keys(given ?? {})) {
    if (!byName.has(name)) {
      const known = declarations.map((d) => d.name);
      throw refuse(`${path}.${name}`, `the Job has no parameter "${name}"${known.length ? ` (it has: ${known.join(', ')})` : ''}`);
    }
  }
  for (const d of declarations) {
    const raw = given?.[d.name];
    if (raw === undefined || raw === null) {
      if (d.default === null) throw refuse(`${path}.${d.name}`, `a value is required (${expected[d.type]})`);
      values[d.name] = d.default;
      continue;
    }
    const value = coerce(d.type, raw);
    if (value === null) throw refuse(`${path}.${d.name}`, `must be ${expected[d.type]}`);
    if (d.choices && !d.choices.includes(value)) throw refuse(`${path}.${d.name}`, `must be one of ${d.choices.map((c) => JSON.stringify(c)).join(', ')}`);
    values[d.name] = value;
  }
  return values;
}

/** Values for checking a Job at save: the defaults, else a sample of each type. */
export function sampleValues(declarations: readonly ParameterDeclaration[], today: string): ParameterValues {
  const sample: Record<ParameterType, ParameterValue> = { string: 'sample', integer: 1, number: 1, boolean: true, date: today };
  return Object.fromEntries(declarations.map((d) => [d.name, d.default ?? d.choices?.[0] ?? sample[d.type]]));
}

/** Writes the values into a selector or target (objects, arrays and strings, recursively). */
export function fillTemplate<T>(value: T, values: ParameterValues): T {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole && whole[1]! in values) return values[whole[1]!] as T;
    return value.replace(PLACEHOLDER, (m, name: string) => (name in values ? String(values[name]) : m)) as T;
  }
  if (Array.isArray(value)) return value.map((v) => fillTemplate(v, values)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillTemplate(v, values)])) as T;
  return value;
}

const literal = (v: ParameterValue) => (typeof v === 'boolean' ? (v ? '1' : '0') : typeof v === 'number' ? String(v) : `'${v.replaceAll("'", "''")}'`);

/** Writes the values into SQL as literals. */
export function fillSql(sql: string, values: ParameterValues): string {
  return sql.replace(PLACEHOLDER, (m, name: string) => (name in values ? literal(values[name]!) : m));
}
