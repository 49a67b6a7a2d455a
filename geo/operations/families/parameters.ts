import { z } from 'zod';
import { crsText } from '../../crs.js';

/* The parameters several operations share, described once, and the units their distances name. */

export const column = z.string().min(1).max(255).describe('Name of an existing column');
export const columns = z.array(column).min(1).describe('Names of existing columns');
export const crs = crsText('A CRS: an authority code (EPSG:4326, EPSG:3857), an OGC URN, WKT, PROJJSON or a PROJ string');
/** Distances are metres unless another unit is asked for; `source` is the layer CRS's own unit (degrees on longitude/latitude). */
export const units = z
  .enum(['meters', 'kilometers', 'feet', 'miles', 'source'])
  .default('meters')
  .describe(
    'Unit of the distance, honoured on any CRS (on longitude/latitude data, per feature on the ellipsoid); source: the layer CRS unit as it is (degrees on longitude/latitude: a large value warns, more than 20 is refused)',
  );
/** A layer other than the one the pipeline applies to. */
export const otherLayer = z.string().min(1).max(1000).describe('Name of another layer of the dataset (or of the Workspace workspace_id names)');
export const workspaceId = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .describe('Another Workspace of yours holding that layer (a second upload or import); in Workspace pipelines only. Same dataset by default');
export const sqlExpression = z.string().min(1).max(4000).describe('An expression in the SQLite dialect over the layer columns, e.g. population > 1000');

export const metresPer: Record<string, number> = { meters: 1, kilometers: 1000, feet: 0.3048, miles: 1609.344 };
export const squareMetresPer: Record<string, number> = {
  square_meters: 1,
  square_kilometers: 1e6,
  hectares: 1e4,
  acres: 4046.8564224,
  square_feet: 0.09290304,
  square_miles: 2589988.110336,
};
