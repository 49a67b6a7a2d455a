import { z } from 'zod';
import { operationCatalog } from '../geo/operations/catalog.js';

/*
 * Finishing touches on the OpenAPI document that @fastify/swagger builds from the zod route
 * schemas, so that it is exactly as strict as the server: a generated client (or schemathesis)
 * fails where the server would, and what the document allows the server accepts.
 *
 * - Operations: the routes validate operation objects against the transformation catalog at run
 *   time (validateOperations names the exact field in its 422); the document describes the same
 *   thing statically, as a union discriminated by `type`, one schema per catalog entry.
 * - NUL: the server refuses NUL (U+0000) anywhere in a JSON body (422, PostgreSQL cannot store
 *   it) and in path and query parameters (400); every string a request carries says so with a
 *   pattern, every object's property names too, and values the schemas leave open are "any JSON
 *   value without NUL".
 */

type Schema = Record<string, unknown>;
type Doc = {
  paths?: Record<string, Record<string, { parameters?: { schema?: Schema }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  components?: { schemas?: Record<string, Schema> };
};

/** ECMA-262 (and Python, Rust) pattern of a string without NUL. */
export const NUL_FREE = '^[^\\u0000]*$';

const ANY_VALUE = 'JsonValueInput';
const anyValueRef = { $ref: `#/components/schemas/${ANY_VALUE}` };
/** What an open slot of a request body accepts: any JSON value whose strings and keys hold no NUL. */
const anyValueSchema: Schema = {
  description: 'Any JSON value; strings and property names must not contain NUL (U+0000)',
  anyOf: [
    { type: ['null', 'boolean', 'number'] },
    { type: 'string', pattern: NUL_FREE },
    { type: 'array', items: anyValueRef },
    { type: 'object', propertyNames: { pattern: NUL_FREE }, additionalProperties: anyValueRef },
  ],
};

const pascal = (id: string) => id.replace(/(^|_)([a-z0-9])/g, (_m, _s, c: string) => c.toUpperCase());

/** The catalog as one schema per operation plus the union of them, for requests (input) and responses (output). */
function describeOperations(schemas: Record<string, Schema>): void {
  for (const io of ['input', 'output'] as const) {
    const suffix = io === 'input' ? 'Input' : '';
    const union = schemas[`Operation${suffix}`];
    if (!union) continue;
    const mapping: Record<string, string> = {};
    for (const d of operationCatalog) {
      const name = `${pascal(d.id)}Operation${suffix}`;
      const shape = z
        .object({ type: z.literal(d.id) })
        .extend(d.parameters.shape)
        .strict();
      const json = z.toJSONSchema(shape, { io, target: 'draft-2020-12' }) as Schema;
      delete json.$schema;
      schemas[name] = { title: d.label, description: d.description, ...json };
      mapping[d.id] = `#/components/schemas/${name}`;
    }
    schemas[`Operation${suffix}`] = {
      description: 'A transform operation: `type` (an id of GET /api/v1/transformations) plus the parameters of that type. ' + 'Operations carry no layer key.',
      oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
      discriminator: { propertyName: 'type', mapping },
    };
  }
}

const isOpen = (s: unknown) => s === true || (typeof s === 'object' && s !== null && Object.keys(s).length === 0);
const hasType = (s: Schema, type: string) => s.type === type || (Array.isArray(s.type) && s.type.includes(type));

/** Makes one request schema refuse NUL, recursively; returns the schema to put in its place. */
function refuseNul(schema: unknown): unknown {
  if (isOpen(schema)) return anyValueRef;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const s = schema as Schema;
  if (s.$ref || s.enum || s.const !== undefined) return s;
  if (hasType(s, 'string') && s.format !== 'binary') {
    // A pattern of its own may still admit NUL somewhere (an unanchored one, `[\s\S]*` inside):
    // rather than judge each, every one gets the NUL-free pattern beside it.
    if (typeof s.pattern !== 'string') s.pattern = NUL_FREE;
    else if (s.pattern !== NUL_FREE) s.allOf = [...((s.allOf as unknown[]) ?? []), { pattern: NUL_FREE }];
  }
  if (hasType(s, 'object') || s.properties) {
    if (s.additionalProperties === undefined || isOpen(s.additionalProperties)) s.additionalProperties = anyValueRef;
    if (s.additionalProperties !== false) s.propertyNames = refuseNul({ type: 'string', ...((s.propertyNames as Schema) ?? {}) });
  }
  for (const key of ['items', 'additionalProperties']) if (key in s && s[key] !== false) s[key] = refuseNul(s[key]);
  for (const key of ['prefixItems', 'allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[key])) s[key] = (s[key] as unknown[]).map(refuseNul);
  if (s.properties) for (const [k, v] of Object.entries(s.properties as Schema)) (s.properties as Schema)[k] = refuseNul(v);
  return s;
}

function refuseNulInRequests(doc: Doc): void {
  const schemas = doc.components!.schemas!;
  // Input components are the ones request bodies refer to (fastify-type-provider-zod names them …Input).
  for (const [name, schema] of Object.entries(schemas)) if (name.endsWith('Input') && name !== ANY_VALUE) schemas[name] = refuseNul(schema) as Schema;
  schemas[ANY_VALUE] = anyValueSchema;
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(operations)) {
      for (const parameter of op.parameters ?? []) if (parameter.schema) parameter.schema = refuseNul(parameter.schema) as Schema;
      // JSON bodies only: multipart parts other than the file are ignored, whatever their names hold.
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        if (media.schema && type.includes('json')) media.schema = refuseNul(media.schema) as Schema;
      }
    }
  }
}

/** Applied last to the generated document (transformObject of @fastify/swagger). */
export function finishDocument<T>(doc: T): T {
  const d = doc as Doc;
  d.components ??= {};
  d.components.schemas ??= {};
  describeOperations(d.components.schemas);
  refuseNulInRequests(d);
  return doc;
}
