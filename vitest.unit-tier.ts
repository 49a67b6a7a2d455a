import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { afterAll, expect } from 'vitest';

/**
 * The unit tier (`*.unit.spec.ts`, `npm run test:unit`) runs without the native GDAL build: a
 * clone where gdal-async failed to compile must still run it. A unit spec that loads the addon,
 * even through a chain of imports, fails here rather than only on a machine without it.
 * Integration specs load it freely.
 */
const require = createRequire(import.meta.url);
const addon = `${sep}node_modules${sep}gdal-async${sep}`;

afterAll(() => {
  const file = expect.getState().testPath ?? '';
  if (!file.endsWith('.unit.spec.ts')) return;
  const loaded = Object.keys(require.cache).filter((id) => id.includes(addon));
  expect(
    loaded.slice(0, 3),
    'a unit spec loaded gdal-async (the native GDAL addon); take its types with `import type` and reach GDAL through the lazy `gdal` of geo/gdal/gdal.ts, or move pure logic out of modules that call it',
  ).toEqual([]);
});
