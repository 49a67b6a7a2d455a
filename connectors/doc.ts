import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { connectors } from './registry.js';
import type { ConnectorDefinition } from './types.js';

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  additionalProperties?: JsonSchema | boolean;
};

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (s.anyOf) return s.anyOf.map(typeOf).join(' or ');
  if (s.type === 'array') return s.prefixItems ? `[${s.prefixItems.map(typeOf).join(', ')}]` : `array of ${s.items ? typeOf(s.items) : 'values'}`;
  if (s.type === 'object') return 'object';
  return Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'value');
}

function fieldTable(schema: JsonSchema, secrets: readonly string[] = []): string[] {
  const props = Object.entries(schema.properties ?? {});
  if (!props.length) return ['No fields.'];
  const out = ['| field | type | required | default | meaning |', '|---|---|---|---|---|'];
  for (const [name, p] of props) {
    const secret = secrets.includes(name) ? ' **secret**' : '';
    out.push(
      `| \`${name}\`${secret} | ${typeOf(p)} | ${schema.required?.includes(name) ? 'yes' : 'no'} | ${p.default !== undefined ? `\`${JSON.stringify(p.default)}\`` : ''} | ${(p.description ?? '').replace(/\|/g, '\\|')} |`,
    );
  }
  return out;
}

/** A selector or target: one table, or one per alternative (a table or a query). */
function shapeTables(schema: JsonSchema): string[] {
  if (schema.anyOf) return schema.anyOf.flatMap((alt, i) => [`Either (${i + 1}):`, '', ...fieldTable(alt), '']);
  return [...fieldTable(schema), ''];
}

/**
 * A type's notes (payloads, incremental reads, caveats): its connectors/<type>/README.md below the
 * title line, which names the connector for someone reading the folder.
 */
export function notesOf(type: string): string {
  return readmeOf(type)
    .replace(/^# .*\n/, '')
    .trim();
}

export const readmeOf = (type: string) => readFileSync(new URL(`./${type}/README.md`, import.meta.url), 'utf8');

const yes = (b: boolean) => (b ? 'yes' : '—');

function section(c: ConnectorDefinition): string[] {
  const out = ['', `## ${c.type}`, '', `**${c.label}.** ${c.description}`, ''];
  out.push(
    c.implemented
      ? `Verified against: ${c.verifiedAgainst}.`
      : `**Accepted and validated, not implemented yet**: test, import and deliver answer \`422 not_implemented\`. (${c.verifiedAgainst}.)`,
    '',
  );
  out.push('### Configuration', '', ...fieldTable(json(c.configuration), c.secrets), '');
  out.push('```json', JSON.stringify({ name: `My ${c.label}`, type: c.type, configuration: c.example }, null, 2), '```', '');
  if (c.source) {
    out.push('### As a Source: `source_resource`', '');
    if (!c.source.resourceRequired) out.push('Optional: the configuration says what to read.', '');
    if (c.source.shorthand) out.push(`A plain string means \`{"${c.source.shorthand}": "…"}\`.`, '');
    out.push(...shapeTables(json(c.source.resource)));
    if (!c.source.importable) out.push('Workspaces cannot import from this type (the spec refuses it): use a Job.', '');
    if (c.source.incremental) out.push(`Incremental reads: ${c.source.incrementalNote ?? 'yes'}.`, '');
    out.push(
      c.source.changeCheck
        ? `On-change trigger (Jobs): ${c.source.changeCheck.note}.`
        : 'On-change trigger (Jobs): not offered (this type cannot tell a change without reading the data).',
      '',
    );
  }
  if (c.destination) {
    out.push('### As a Destination: `destination_target`', '', ...shapeTables(json(c.destination.target)));
    if (!c.destination.deliverable) out.push('Workspaces cannot deliver to this type (the spec refuses it): use a Job.', '');
  }
  const notes = notesOf(c.type);
  if (notes) out.push('### Notes', '', notes, '');
  return out;
}

/** The connector reference (docs/connectors.md), generated from the registry's declarations and the READMEs so it cannot drift. */
export function renderConnectorsDoc(): string {
  const out = [
    '# Connectors',
    '',
    'Generated from `connectors/registry.ts` (`node --import tsx scripts/gen-connectors-doc.ts`); the',
    'server publishes the same catalogue, with JSON Schemas, at `GET /api/v1/connectors` (no token).',
    'A Source or Destination is `{"name", "type", "configuration"}`. Secret fields are write-only:',
    'responses show `has_<field>` instead, an update that leaves one out keeps it, and `null` clears',
    'it. They are encrypted (AES-256-GCM) before they are stored and never appear in a response,',
    'an event, a log line, an error or a workflow history. The per-use selector (`source_resource`)',
    'and target (`destination_target`) belong to a Workspace import, a delivery or a Job.',
    '',
    '"Verified against" starts with what `npm test` runs the connector against: **real server in npm test**',
    "(the product itself, from a package registry or Debian; for plain HTTP the tests' own server), **emulator",
    "in npm test** (an emulator of the service: Azurite, moto, fakesnow), **stand-in checked with the vendor's",
    "client** (a server written here from the vendor's reference, whose answers the vendor's own client checks",
    'in the same suite), **stand-in only**, or **no server here** (unit tests and an opt-in contract suite).',
    '',
    '| type | label | Source | Destination | import | deliver | test | discover | verified against |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const c of connectors) {
    const can = (b: boolean) => yes(c.implemented && b);
    out.push(
      `| [\`${c.type}\`](#${c.type}) | ${c.label} | ${yes(Boolean(c.source))} | ${yes(Boolean(c.destination))} | ${can(Boolean(c.source?.importable))} | ${can(Boolean(c.destination?.deliverable))} | ${can(Boolean(c.test))} | ${can(Boolean(c.discover))} | ${c.implemented ? c.verifiedAgainst : `not implemented (${c.verifiedAgainst.replace(/^not verified: /, '')})`} |`,
    );
  }
  for (const c of connectors) out.push(...section(c));
  return `${out.join('\n')}\n`;
}
