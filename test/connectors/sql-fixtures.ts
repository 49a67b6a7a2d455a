import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { ConnectorContext, DeliverInput } from '../../connectors/types.js';
import type { ConnectorFailureReason } from '../../domain/transfers.js';
import { gdal } from '../../geo/gdal/gdal.js';
import type { LocalMariadb } from '../servers/mariadb/server.js';
import { layerFromWktCsv } from '../support/fixtures.js';
import { connectorContext, expectConnectorError, filesIn } from './support.js';

/*
 * What the SQL connector specs share: small real-world-like layers made with GDAL (what GIS teams
 * load into warehouses and what breaks loaders: projected CRSs, long non-ASCII field names, null
 * geometries), a delivery's input, a layer read back, and MariaDB's arranging connection.
 */

/** What an activity hands a connector's deliver: a file (GeoPackage unless `extra` says otherwise) and a fresh delivery id. */
export const layerInput = (file: string, extra: Partial<DeliverInput> = {}): DeliverInput => ({
  file,
  filename: path.basename(file),
  format: 'GPKG',
  mediaType: null,
  layers: [],
  deliveryId: randomUUID(),
  ...extra,
});

/** A GeoJSON file of `features` named `name` in `dir`. */
export function geoJsonFile(dir: string, name: string, features: object[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features }));
  return file;
}

/** The first layer of a file as GDAL reads it: names, types, CRS and every feature's fields and WKT (null without geometry). */
export async function readLayer(file: string) {
  const ds = await gdal.openAsync(file);
  try {
    const layer = ds.layers.get(0);
    const rows = [];
    for await (const f of layer.features) rows.push({ ...f.fields.toObject(), wkt: f.getGeometry()?.toWKT() ?? null });
    return {
      driver: ds.driver.description,
      name: layer.name,
      geomType: gdal.Geometry.getName(layer.geomType),
      srs: layer.srs?.getAuthorityCode(null) ?? null,
      fields: layer.fields.map((f) => f.name),
      /** `name:type`, as GDAL types them. */
      fieldTypes: layer.fields.map((f) => `${f.name}:${f.type}`),
      rows,
    };
  } finally {
    ds.close();
  }
}

/** A MariaDB connector configuration for the suite's login, and SQL run as root in its database. */
export function mariadbAccess(server: LocalMariadb) {
  const config = { host: server.host, port: server.port, database: server.database, username: server.username, password: server.password, ssl: false };
  const sql = async (text: string, values: unknown[] = []) => {
    const c = await server.root(server.database);
    try {
      return (await c.query(text, values))[0] as Record<string, unknown>[];
    } finally {
      await c.end();
    }
  };
  return { config, sql };
}

function gpkgFromCsv(dir: string, name: string, header: string, types: string, lines: string[], epsg: number, nlt: string): string {
  const csv = path.join(dir, `${name}.csv`);
  writeFileSync(csv, `${[header, ...lines].join('\n')}\n`);
  writeFileSync(csv.replace(/\.csv$/, '.csvt'), `${types}\n`);
  const gpkg = path.join(dir, `${name}.gpkg`);
  return layerFromWktCsv('GPKG', gpkg, csv, `EPSG:${epsg}`, name, ['-nlt', nlt]);
}

/** The field of the boroughs layer whose name is long and not ASCII (64 characters). */
export const LONG_FIELD = 'Población_según_el_censo_de_2020_del_distrito_municipal_de_Nueva';

/** NYC boroughs in miniature: EPSG:2263 (US feet) multipolygons with a long non-ASCII field name. */
export function boroughsGpkg(dir: string): string {
  return gpkgFromCsv(
    dir,
    'boroughs',
    `BoroCode,BoroName,${LONG_FIELD},Shape_Area,wkt`,
    'Integer,String,Integer,Real,WKT',
    [
      '1,Manhattan,1694251,1623819823.81,"MULTIPOLYGON (((980000 190000,990000 190000,990000 200000,980000 200000,980000 190000)),((995000 190000,996000 190000,996000 191000,995000 191000,995000 190000)))"',
      '2,The Brönx,1472654,1186924586.14,"MULTIPOLYGON (((1000000 240000,1010000 240000,1010000 250000,1000000 250000,1000000 240000)))"',
      '3,Staten Ísland,495747,1623631283.43,"MULTIPOLYGON (((940000 140000,950000 140000,950000 150000,940000 150000,940000 140000)))"',
    ],
    2263,
    'MULTIPOLYGON',
  );
}

/** Natural Earth's countries in miniature: EPSG:4326 polygons, names in several scripts. */
export function countriesGpkg(dir: string): string {
  return gpkgFromCsv(
    dir,
    'countries',
    'ADMIN,NAME_ZH,POP_EST,GDP_MD,wkt',
    'String,String,Integer64,Real,WKT',
    [
      'Switzerland,瑞士,8574832,703082,"POLYGON ((6 46,10 46,10 47.8,6 47.8,6 46))"',
      'Côte d\'Ivoire,科特迪瓦,25716544,58539,"POLYGON ((-8 4.5,-2.5 4.5,-2.5 10.7,-8 10.7,-8 4.5))"',
      'Fiji,斐济,889953,5496,"MULTIPOLYGON (((177 -18,179.9 -18,179.9 -16,177 -16,177 -18)),((-180 -17,-179.8 -17,-179.8 -16.5,-180 -16.5,-180 -17)))"',
    ],
    4326,
    'MULTIPOLYGON',
  );
}

/** A layer where some features have no geometry (addresses that failed geocoding). */
export function nullGeometriesGpkg(dir: string): string {
  return gpkgFromCsv(
    dir,
    'addresses',
    'id,address,wkt',
    'Integer,String,WKT',
    ['1,"Bahnhofstrasse 1, Zürich","POINT (8.54 47.37)"', '2,"Unknown, nowhere",', '3,"Rue du Rhône 2, Genève","POINT (6.15 46.2)"', '4,,'],
    4326,
    'POINT',
  );
}

/** nullGeometriesGpkg read back, as [id, WKT]: the addresses that failed geocoding have no geometry. */
export const NULL_GEOMETRY_ROWS = [
  [1, 'POINT (8.54 47.37)'],
  [2, null],
  [3, 'POINT (6.15 46.2)'],
  [4, null],
];

/**
 * Extracts that must fail: each `[resource, reason, maxBytes?]` fails with that reason and leaves
 * no file in its work folder.
 */
export async function expectExtractFailures<R>(
  extract: (resource: R, ctx: ConnectorContext) => Promise<unknown>,
  cases: readonly (readonly [R, ConnectorFailureReason, number?])[],
): Promise<void> {
  for (const [resource, reason, maxBytes] of cases) {
    const ctx = connectorContext(maxBytes === undefined ? {} : { maxBytes });
    await expectConnectorError(extract(resource, ctx), reason);
    expect(filesIn(ctx.workDir)).toEqual([]);
  }
}
