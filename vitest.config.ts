import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.spec.ts'],
    exclude: ['node_modules/**', '.data/**', 'clients/**'],
    // Two cores: a few files at a time, each with its own database.
    maxWorkers: 2,
    // geo/gdal/gdal.ts collects gdal-async's stale CRS wrappers before each CRS read (see layerSrs).
    execArgv: ['--expose-gc'],
    // Fails a *.unit.spec.ts that loads gdal-async: the unit tier runs without the native build.
    setupFiles: ['./vitest.unit-tier.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
