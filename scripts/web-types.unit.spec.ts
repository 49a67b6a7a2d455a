import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderWebTypes } from './web-types.js';

describe('web/src/api-types.ts', () => {
  it('is what the API schemas generate today (else: node --import tsx scripts/gen-web-types.ts)', () => {
    expect(readFileSync(new URL('../web/src/api-types.ts', import.meta.url), 'utf8')).toBe(renderWebTypes());
  });
});
