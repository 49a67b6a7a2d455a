/*
 * GeoJSON geometries (as GDAL writes them, in the target layer's CRS) as Esri JSON geometries,
 * the shape ArcGIS's applyEdits takes. Pure. Esri polygons are lists of rings in which outer
 * rings run clockwise and holes counter-clockwise; GeoJSON says nothing reliable about
 * orientation (RFC 7946 says the opposite), so every ring is oriented here.
 */

type Position = number[];
export type GeoJsonGeometry =
  | { type: 'Point'; coordinates: Position }
  | { type: 'MultiPoint'; coordinates: Position[] }
  | { type: 'LineString'; coordinates: Position[] }
  | { type: 'MultiLineString'; coordinates: Position[][] }
  | { type: 'Polygon'; coordinates: Position[][] }
  | { type: 'MultiPolygon'; coordinates: Position[][][] }
  | { type: 'GeometryCollection'; geometries: unknown[] };

export type EsriGeometry = { x: number; y: number } | { points: number[][] } | { paths: number[][][] } | { rings: number[][][] };

const xy = (p: Position) => [p[0]!, p[1]!];

/** Twice the signed area (shoelace): negative for clockwise rings in a y-up plane. */
export function signedArea(ring: number[][]): number {
  let sum = 0;
  for (let i = 0; i < ring.length - 1; i++) sum += ring[i]![0]! * ring[i + 1]![1]! - ring[i + 1]![0]! * ring[i]![1]!;
  return sum;
}

function oriented(ring: Position[], clockwise: boolean): number[][] {
  const r = ring.map(xy);
  return signedArea(r) < 0 === clockwise ? r : r.reverse();
}

const polygonRings = (rings: Position[][]) => rings.map((ring, i) => oriented(ring, i === 0));

/** The Esri JSON geometry of a GeoJSON geometry; null for none; throws for collections. */
export function toEsriGeometry(g: GeoJsonGeometry | null | undefined): EsriGeometry | null {
  if (!g) return null;
  switch (g.type) {
    case 'Point':
      return { x: g.coordinates[0]!, y: g.coordinates[1]! };
    case 'MultiPoint':
      return { points: g.coordinates.map(xy) };
    case 'LineString':
      return { paths: [g.coordinates.map(xy)] };
    case 'MultiLineString':
      return { paths: g.coordinates.map((line) => line.map(xy)) };
    case 'Polygon':
      return { rings: polygonRings(g.coordinates) };
    case 'MultiPolygon':
      return { rings: g.coordinates.flatMap(polygonRings) };
    default:
      throw new Error(`${g.type} cannot be written to a feature layer (one geometry type per layer)`);
  }
}

/** The Esri geometry type of a layer for a GeoJSON geometry type. */
export function esriGeometryType(type: string | null): string | null {
  if (!type) return null;
  if (/Point$/.test(type)) return type === 'Point' ? 'esriGeometryPoint' : 'esriGeometryMultipoint';
  if (/LineString$/.test(type)) return 'esriGeometryPolyline';
  if (/Polygon$/.test(type)) return 'esriGeometryPolygon';
  return null;
}
