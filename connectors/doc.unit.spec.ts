import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configurationBodySchema, connectors } from './registry.js';
import { notesOf, readmeOf, renderConnectorsDoc } from './doc.js';

describe('connector catalogue', () => {
  it("every type's example configuration is valid for its type", () => {
    for (const c of connectors) {
      const result = configurationBodySchema(c).safeParse(c.example);
      expect(result.success, `${c.type}: ${JSON.stringify(result.error?.issues)}`).toBe(true);
    }
  });

  it('every secret field exists in its configuration and is optional there', () => {
    for (const c of connectors) {
      for (const field of c.secrets) {
        expect(c.configuration.shape[field], `${c.type}.${field}`).toBeDefined();
        expect((c.configuration.shape[field] as { isOptional(): boolean }).isOptional(), `${c.type}.${field}`).toBe(true);
      }
    }
  });

  it("every type's notes are its README.md, titled with its label and type", () => {
    for (const c of connectors) {
      expect(readmeOf(c.type).split('\n')[0], c.type).toBe(`# ${c.label} (\`${c.type}\`)`);
      expect(notesOf(c.type).length, `${c.type}: connectors/${c.type}/README.md has no notes below its title`).toBeGreaterThan(0);
    }
  });

  it('is documented in docs/connectors.md exactly as generated (run scripts/gen-connectors-doc.ts)', () => {
    expect(readFileSync('docs/connectors.md', 'utf8')).toBe(renderConnectorsDoc());
  });
});
