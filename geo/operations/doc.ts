import { publicCatalog } from './catalog.js';

type JsonSchema = {
  type?: string;
  enum?: unknown[];
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
};

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (s.type === 'array') return s.prefixItems ? `[${s.prefixItems.map(typeOf).join(', ')}]` : `array of ${s.items ? typeOf(s.items) : 'values'}`;
  return s.type ?? 'value';
}

/** The operation reference (docs/operations.md), generated from the catalog so it cannot drift. */
export function renderOperationsDoc(): string {
  const out: string[] = [
    '# Transformation catalog',
    '',
    'Generated from `geo/operations/catalog.ts` (`node --import tsx scripts/gen-operations-doc.ts`); the',
    'server publishes the same list at `GET /api/v1/transformations`. Every operation object is',
    '`{"type": <id>, …parameters}` and is used alike in Recipes, Jobs and Workspace pipelines.',
    'Operations run in the order given. Geometry operations on a non-spatial table answer',
    '`invalid_transformation`.',
    '',
    '| id | category | needs geometry | what it does |',
    '|---|---|---|---|',
  ];
  const catalog = publicCatalog();
  for (const op of catalog) out.push(`| [\`${op.id}\`](#${op.id}) | ${op.category} | ${op.requires_geometry ? 'yes' : 'no'} | ${op.description} |`);
  for (const op of catalog) {
    out.push('', `## ${op.id}`, '', `**${op.label}.** ${op.description}`, '');
    const schema = op.parameters as { properties?: Record<string, JsonSchema>; required?: string[] };
    const props = Object.entries(schema.properties ?? {});
    if (props.length) {
      out.push('| parameter | type | required | default | meaning |', '|---|---|---|---|---|');
      for (const [name, p] of props) {
        const bounds = [p.minimum !== undefined ? `≥ ${p.minimum}` : '', p.maximum !== undefined ? `≤ ${p.maximum}` : ''].filter(Boolean).join(', ');
        out.push(
          `| \`${name}\` | ${typeOf(p)}${bounds ? ` (${bounds})` : ''} | ${schema.required?.includes(name) ? 'yes' : 'no'} | ${p.default !== undefined ? `\`${JSON.stringify(p.default)}\`` : ''} | ${p.description ?? ''} |`,
        );
      }
      out.push('');
    } else {
      out.push('No parameters.', '');
    }
    out.push('```json', JSON.stringify(op.example), '```');
  }
  return `${out.join('\n')}\n`;
}
