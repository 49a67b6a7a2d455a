import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { operationCatalog, validateOperations } from './catalog.js';
import { renderOperationsDoc } from './doc.js';

describe('transformation catalog', () => {
  it('has a valid example for every operation', () => {
    for (const op of operationCatalog) {
      const result = validateOperations([op.example]);
      expect(result.ok, `${op.id}: ${JSON.stringify(result)}`).toBe(true);
      expect(op.example.type).toBe(op.id);
    }
  });

  it('is documented in docs/operations.md exactly as generated (run scripts/gen-operations-doc.ts)', () => {
    expect(readFileSync('docs/operations.md', 'utf8')).toBe(renderOperationsDoc());
  });
});
