import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import gdal from 'gdal-async';
import { ogrLayerInfo } from '../ogrinfo.js';
import { basicAuth, readBody, requestLines, serveStandIn } from '../standin.js';

/*
 * A stand-in for GeoServer (a Java web application that cannot be installed here), written from
 * GeoServer's REST API reference: workspaces, GeoPackage data stores (file uploads with
 * configure=none|first|all), feature types, layers, styles and the resource API, JSON or XML
 * bodies, HTTP Basic authentication. Its OGC side is real: every layer is served by MapServer
 * (Debian's cgi-mapserver) through map files rewritten on each catalogue change, at GeoServer's
 * addresses ({base}/ows, {base}/{ws}/ows, {base}/{ws}/{layer}/ows). The suites check its REST
 * answers with the geoserver-rest client library (test/servers/geoserver/check-client.py).
 */

export const MAPSERV = '/usr/lib/cgi-bin/mapserv';

export const skipWithoutMapserver = existsSync(MAPSERV)
  ? false
  : `MapServer is not installed (${MAPSERV}): run \`npm test\` (test/servers/geoserver/install.sh installs cgi-mapserver)`;

interface FeatureType {
  name: string;
  nativeName: string;
  title: string;
  abstract?: string;
  style: string;
}

interface Store {
  name: string;
  /** `file:data/<ws>/<store>/<file>.gpkg`, relative to the data directory, as GeoServer keeps uploads. */
  database: string;
  featureTypes: Map<string, FeatureType>;
}

export interface GeoserverStandIn {
  /** …/geoserver, as a connection's url. */
  url: string;
  username: string;
  password: string;
  dataDir: string;
  /** Every request seen (method and path), for checks of what the connector did. */
  requests: string[];
  /** Absolute path of a store's GeoPackage. */
  fileOf(workspace: string, store: string): string | null;
  stop(): Promise<void>;
}

const STYLES = ['generic', 'point', 'line', 'polygon', 'raster'];

/** A tiny reader for the flat XML bodies GeoServer clients send (<workspace><name>x</name></workspace>). */
function xmlValue(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(xml);
  return m ? m[1]!.trim() : undefined;
}

function layerInfo(file: string, table: string): { epsg: number | null; type: string } {
  const info = ogrLayerInfo(file, table);
  const type = /point/i.test(info.geometry) ? 'POINT' : /line/i.test(info.geometry) ? 'LINE' : 'POLYGON';
  return { epsg: info.epsg, type };
}

export async function startGeoserver(options: { username?: string; password?: string } = {}): Promise<GeoserverStandIn> {
  const username = options.username ?? 'admin';
  const password = options.password ?? 'geoserver-test-password';
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-geoserver-'));
  const mapsDir = path.join(dataDir, 'maps');
  mkdirSync(mapsDir);
  const configFile = path.join(dataDir, 'mapserver.conf');
  writeFileSync(configFile, `CONFIG\n  ENV\n    MS_MAP_PATTERN "^${mapsDir}/"\n  END\nEND\n`);
  const workspaces = new Map<string, Map<string, Store>>();
  let base = '';
  const abs = (database: string) => path.join(dataDir, database.replace(/^file:/, ''));

  const q = (s: string) => `"${s.replace(/"/g, '')}"`;
  function layerBlock(ft: FeatureType, store: Store): string {
    const info = layerInfo(abs(store.database), ft.nativeName);
    const srs = info.epsg ? `EPSG:${info.epsg}${info.epsg !== 4326 ? ' EPSG:4326' : ''}` : 'EPSG:4326';
    return `  LAYER
    NAME ${q(ft.name)}
    TYPE ${info.type}
    STATUS ON
    CONNECTIONTYPE OGR
    CONNECTION ${q(abs(store.database))}
    DATA ${q(ft.nativeName)}
    ${info.epsg ? `PROJECTION "init=epsg:${info.epsg}" END` : ''}
    METADATA
      "wfs_title" ${q(ft.title)}
      "wfs_abstract" ${q(ft.abstract ?? '')}
      "wfs_srs" "${srs}"
      "gml_include_items" "all"
      "gml_types" "auto"
      "gml_featureid" "fid"
    END
  END
`;
  }
  function mapOf(name: string, layers: string[], epsg: number | null, prefix?: string): string {
    const srs = epsg && epsg !== 4326 ? `EPSG:${epsg} EPSG:4326` : 'EPSG:4326';
    return `MAP
  NAME ${q(name)}
  ${epsg && epsg !== 4326 ? 'EXTENT -100000000 -100000000 100000000 100000000' : 'EXTENT -180 -90 180 90'}
  PROJECTION "init=epsg:${epsg ?? 4326}" END
  OUTPUTFORMAT
    NAME "application/json"
    DRIVER "OGR/GEOJSON"
    MIMETYPE "application/json"
    FORMATOPTION "FORM=SIMPLE"
    FORMATOPTION "STORAGE=memory"
  END
  WEB
    METADATA
      "wfs_enable_request" "*"
      "wfs_title" ${q(name)}
      "wfs_onlineresource" "${base}/ows?"
      "wfs_getfeature_formatlist" "application/json"
      "wfs_srs" "${srs}"
      "wfs_maxfeatures" "5000"
      ${prefix ? `"wfs_namespace_prefix" ${q(prefix)}` : ''}
    END
  END
${layers.join('')}END
`;
  }
  /** Rewrites every map file (write, then rename: a request reads the old or the new one). */
  function writeMaps() {
    const all: string[] = [];
    for (const [ws, stores] of workspaces) {
      const inWs: string[] = [];
      for (const store of stores.values()) {
        for (const ft of store.featureTypes.values()) {
          const block = layerBlock(ft, store);
          inWs.push(block);
          all.push(block);
          const epsg = layerInfo(abs(store.database), ft.nativeName).epsg;
          const file = path.join(mapsDir, `${ws}__${ft.name}.map`);
          writeFileSync(`${file}.tmp`, mapOf(`${ws}_${ft.name}`, [block], epsg, ws));
          renameSync(`${file}.tmp`, file);
        }
      }
      writeFileSync(path.join(mapsDir, `${ws}.map.tmp`), mapOf(ws, inWs, null, ws));
      renameSync(path.join(mapsDir, `${ws}.map.tmp`), path.join(mapsDir, `${ws}.map`));
    }
    writeFileSync(path.join(mapsDir, 'all.map.tmp'), mapOf('geoserver', all, null));
    renameSync(path.join(mapsDir, 'all.map.tmp'), path.join(mapsDir, 'all.map'));
  }

  /** MapServer as a CGI: one process per request, as Debian's cgi-mapserver runs behind a web server. */
  function mapserv(mapfile: string, query: URLSearchParams, res: ServerResponse) {
    if (!existsSync(mapfile)) return send(res, 404, 'text/plain', 'no such service');
    // GeoServer's CQL_FILTER, for the comparisons the suites use (attribute = 'text'), as the FES filter MapServer reads.
    const cql = query.get('CQL_FILTER') ?? query.get('cql_filter');
    query.delete('CQL_FILTER');
    query.delete('cql_filter');
    if (cql) {
      const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*'([^']*)'\s*$/.exec(cql);
      if (!m)
        return send(
          res,
          400,
          'application/xml',
          '<ows:ExceptionReport><ows:Exception exceptionCode="InvalidParameterValue" locator="CQL_FILTER"/></ows:ExceptionReport>',
        );
      query.set(
        'FILTER',
        `<fes:Filter xmlns:fes="http://www.opengis.net/fes/2.0"><fes:PropertyIsEqualTo><fes:ValueReference>${m[1]}</fes:ValueReference><fes:Literal>${m[2]}</fes:Literal></fes:PropertyIsEqualTo></fes:Filter>`,
      );
    }
    const child = spawn(MAPSERV, [], {
      env: {
        PATH: '/usr/bin:/bin',
        MAPSERVER_CONFIG_FILE: configFile,
        MS_MAPFILE: mapfile,
        REQUEST_METHOD: 'GET',
        QUERY_STRING: [...query].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'),
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('close', () => {
      const out = Buffer.concat(chunks);
      const split = out.indexOf('\r\n\r\n') >= 0 ? out.indexOf('\r\n\r\n') : out.indexOf('\n\n');
      const head = out.subarray(0, split).toString();
      const body = out.subarray(split + (out[split] === 13 ? 4 : 2));
      const status = Number(/^Status:\s*(\d+)/m.exec(head)?.[1] ?? 200);
      const type = /^Content-Type:\s*(.+)$/im.exec(head)?.[1]?.trim() ?? 'application/octet-stream';
      res.writeHead(status, { 'content-type': type, 'content-length': body.length });
      res.end(body);
    });
  }

  function send(res: ServerResponse, status: number, type: string, body: string | Buffer) {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  }
  const json = (res: ServerResponse, status: number, body: unknown) => send(res, status, 'application/json', JSON.stringify(body));
  const notFound = (res: ServerResponse, what: string) => send(res, 404, 'text/plain', `No such ${what}`);
  const href = (...segments: string[]) => `${base}/rest/${segments.map(encodeURIComponent).join('/')}.json`;
  const list = (outer: string, inner: string, names: string[], hrefOf: (n: string) => string) => ({
    [outer]: names.length ? { [inner]: names.map((name) => ({ name, href: hrefOf(name) })) } : '',
  });

  function storeJson(ws: string, store: Store) {
    return {
      dataStore: {
        name: store.name,
        description: null,
        type: 'GeoPackage',
        enabled: true,
        workspace: { name: ws, href: href('workspaces', ws) },
        connectionParameters: {
          entry: [
            { '@key': 'database', $: store.database },
            { '@key': 'dbtype', $: 'geopkg' },
            { '@key': 'namespace', $: `http://${ws}` },
          ],
        },
        _default: false,
        featureTypes: `${base}/rest/workspaces/${ws}/datastores/${store.name}/featuretypes.json`,
      },
    };
  }
  function featureTypeJson(ws: string, store: Store, ft: FeatureType) {
    const file = abs(store.database);
    const ds = gdal.open(file);
    try {
      const layer = ds.layers.get(ft.nativeName);
      const e = layer.getExtent();
      const code = layerInfo(file, ft.nativeName).epsg;
      const attrs = layer.fields.getNames().map((name) => ({ name, minOccurs: 0, maxOccurs: 1, nillable: true, binding: 'java.lang.String' }));
      return {
        featureType: {
          name: ft.name,
          nativeName: ft.nativeName,
          title: ft.title,
          ...(ft.abstract ? { abstract: ft.abstract } : {}),
          namespace: { name: ws, href: `${base}/rest/namespaces/${ws}.json` },
          srs: code ? `EPSG:${code}` : null,
          nativeBoundingBox: { minx: e.minX, maxx: e.maxX, miny: e.minY, maxy: e.maxY, crs: code ? `EPSG:${code}` : null },
          projectionPolicy: 'FORCE_DECLARED',
          enabled: true,
          store: { '@class': 'dataStore', name: `${ws}:${store.name}`, href: href('workspaces', ws, 'datastores', store.name) },
          attributes: { attribute: [...attrs, { name: 'geom', minOccurs: 0, maxOccurs: 1, nillable: true, binding: 'org.locationtech.jts.geom.Geometry' }] },
        },
      };
    } finally {
      ds.close();
    }
  }
  const layerOf = (ws: string, name: string): { store: Store; ft: FeatureType } | null => {
    for (const store of workspaces.get(ws)?.values() ?? []) {
      const ft = store.featureTypes.get(name);
      if (ft) return { store, ft };
    }
    return null;
  };
  function layerJson(ws: string, store: Store, ft: FeatureType) {
    return {
      layer: {
        name: ft.name,
        type: 'VECTOR',
        defaultStyle: { name: ft.style, href: `${base}/rest/styles/${ft.style}.json` },
        resource: { '@class': 'featureType', name: `${ws}:${ft.name}`, href: href('workspaces', ws, 'datastores', store.name, 'featuretypes', ft.name) },
        attribution: { logoWidth: 0, logoHeight: 0 },
      },
    };
  }
  /** A feature type from a POST/PUT body, JSON or XML. */
  function featureTypeBody(body: Buffer, type: string): Partial<FeatureType> {
    const text = body.toString('utf8');
    if (/json/.test(type)) {
      const ft = (JSON.parse(text) as { featureType?: Record<string, string> }).featureType ?? {};
      return { name: ft.name, nativeName: ft.nativeName, title: ft.title, abstract: ft.abstract };
    }
    return { name: xmlValue(text, 'name'), nativeName: xmlValue(text, 'nativeName'), title: xmlValue(text, 'title'), abstract: xmlValue(text, 'abstract') };
  }
  function tablesOf(file: string): string[] {
    const ds = gdal.open(file);
    try {
      return ds.layers.map((l) => l.name);
    } finally {
      ds.close();
    }
  }

  async function rest(req: IncomingMessage, res: ServerResponse, parts: string[], query: URLSearchParams, body: Buffer) {
    const method = req.method ?? 'GET';
    const type = req.headers['content-type'] ?? '';
    const strip = (s: string) => s.replace(/\.(json|xml)$/, '');
    const p = parts.map((s, i) => (i === parts.length - 1 ? strip(s) : s));
    const [a, ws, b, ds, c, ftName] = p;
    if (a === 'about' && ws === 'version' && method === 'GET') {
      return json(res, 200, {
        about: { resource: [{ '@name': 'GeoServer', 'Build-Timestamp': '2024-01-01', Version: '2.24.1 (stand-in)', 'Git-Revision': 'stand-in' }] },
      });
    }
    if (a === 'styles' && p.length === 1 && method === 'GET')
      return json(
        res,
        200,
        list('styles', 'style', STYLES, (n) => href('styles', n)),
      );
    if (a === 'resource' && method === 'DELETE') {
      const rel = p.slice(1).join('/');
      const file = path.join(dataDir, rel);
      if (rel.split('/').includes('..') || !existsSync(file)) return notFound(res, 'resource');
      unlinkSync(file);
      return send(res, 200, 'text/plain', '');
    }
    if (a === 'layers' && p.length === 2) {
      const [w, name] = decodeURIComponent(ws!).split(':');
      const found = w && name ? layerOf(w, name) : null;
      if (!found) return notFound(res, 'layer');
      if (method === 'GET') return json(res, 200, layerJson(w!, found.store, found.ft));
      if (method === 'PUT') {
        const text = body.toString('utf8');
        const style = /json/.test(type)
          ? (JSON.parse(text) as { layer?: { defaultStyle?: { name?: string } } }).layer?.defaultStyle?.name
          : xmlValue(xmlValue(text, 'defaultStyle') ?? '', 'name');
        if (style && !STYLES.includes(style)) return send(res, 400, 'text/plain', `No such style: ${style}`);
        if (style) found.ft.style = style;
        return send(res, 200, 'text/plain', '');
      }
    }
    if (a !== 'workspaces') return notFound(res, 'resource');
    if (p.length === 1) {
      if (method === 'GET')
        return json(
          res,
          200,
          list('workspaces', 'workspace', [...workspaces.keys()].sort(), (n) => href('workspaces', n)),
        );
      if (method === 'POST') {
        const text = body.toString('utf8');
        const name = /json/.test(type) ? (JSON.parse(text) as { workspace?: { name?: string } }).workspace?.name : xmlValue(text, 'name');
        if (!name) return send(res, 400, 'text/plain', 'A workspace needs a name');
        if (workspaces.has(name)) return send(res, 409, 'text/plain', `Workspace '${name}' already exists`);
        workspaces.set(name, new Map());
        return send(res, 201, 'text/plain', name);
      }
    }
    const stores = workspaces.get(ws!);
    if (!stores) return notFound(res, `workspace ${ws}`);
    if (p.length === 2) {
      if (method === 'GET')
        return json(res, 200, {
          workspace: {
            name: ws,
            isolated: false,
            dataStores: href('workspaces', ws!, 'datastores'),
            coverageStores: href('workspaces', ws!, 'coveragestores'),
            wmsStores: href('workspaces', ws!, 'wmsstores'),
          },
        });
      if (method === 'DELETE') {
        if (stores.size && query.get('recurse') !== 'true') return send(res, 403, 'text/plain', 'Workspace is not empty');
        workspaces.delete(ws!);
        writeMaps();
        return send(res, 200, 'text/plain', '');
      }
    }
    if (b === 'layers') {
      if (p.length === 3 && method === 'GET') {
        const names = [...stores.values()].flatMap((s) => [...s.featureTypes.keys()]).sort();
        return json(
          res,
          200,
          list('layers', 'layer', names, (n) => href('workspaces', ws!, 'layers', n)),
        );
      }
      const found = layerOf(ws!, ds!);
      if (!found) return notFound(res, `layer ${ws}:${ds}`);
      if (p.length === 4 && method === 'GET') return json(res, 200, layerJson(ws!, found.store, found.ft));
      if (p.length === 4 && method === 'DELETE') {
        found.store.featureTypes.delete(ds!);
        writeMaps();
        return send(res, 200, 'text/plain', '');
      }
    }
    if (b !== 'datastores') return notFound(res, 'resource');
    if (p.length === 3) {
      if (method === 'GET')
        return json(
          res,
          200,
          list('dataStores', 'dataStore', [...stores.keys()].sort(), (n) => href('workspaces', ws!, 'datastores', n)),
        );
    }
    const store = stores.get(ds!);
    if (p.length === 5 && /^file\.\w+$/.test(c ?? '') && method === 'PUT') {
      // PUT …/datastores/{store}/file.gpkg: the upload becomes (or replaces) the store's GeoPackage.
      if (!/\.gpkg$/.test(parts[4]!)) return send(res, 400, 'text/plain', 'Only GeoPackage uploads are supported by this stand-in');
      const fileName = (query.get('filename') ?? `${ds}.gpkg`).replace(/[^A-Za-z0-9_.-]/g, '_');
      const rel = `data/${ws}/${ds}/${/\.gpkg$/.test(fileName) ? fileName : `${fileName}.gpkg`}`;
      mkdirSync(path.dirname(abs(rel)), { recursive: true });
      writeFileSync(`${abs(rel)}.part`, body);
      let tables: string[];
      try {
        tables = tablesOf(`${abs(rel)}.part`);
      } catch {
        rmSync(`${abs(rel)}.part`, { force: true });
        return send(res, 400, 'text/plain', 'The upload is not a GeoPackage');
      }
      renameSync(`${abs(rel)}.part`, abs(rel));
      const target: Store = store ?? { name: ds!, database: `file:${rel}`, featureTypes: new Map() };
      if (store && query.get('update') !== 'overwrite' && store.database !== `file:${rel}`) store.database = `file:${rel}`;
      stores.set(ds!, target);
      const configure = query.get('configure') ?? 'first';
      for (const table of configure === 'none' ? [] : configure === 'first' ? tables.slice(0, 1) : tables) {
        if (!target.featureTypes.has(table) && !layerOf(ws!, table))
          target.featureTypes.set(table, { name: table, nativeName: table, title: table, style: 'generic' });
      }
      writeMaps();
      return send(res, store ? 200 : 201, 'text/plain', '');
    }
    if (!store) return notFound(res, `store ${ws}:${ds}`);
    if (p.length === 4) {
      if (method === 'GET') return json(res, 200, storeJson(ws!, store));
      if (method === 'PUT') {
        const text = body.toString('utf8');
        let database: string | undefined;
        if (/json/.test(type)) {
          const entries =
            (JSON.parse(text) as { dataStore?: { connectionParameters?: { entry?: { '@key': string; $: string }[] } } }).dataStore?.connectionParameters
              ?.entry ?? [];
          database = entries.find((e) => e['@key'] === 'database')?.$;
        } else {
          database = /<entry key="database">([^<]*)<\/entry>/.exec(text)?.[1];
        }
        if (database) {
          if (!existsSync(abs(database))) return send(res, 400, 'text/plain', `Cannot open ${database}`);
          store.database = database;
        }
        writeMaps();
        return send(res, 200, 'text/plain', '');
      }
      if (method === 'DELETE') {
        if (store.featureTypes.size && query.get('recurse') !== 'true') return send(res, 403, 'text/plain', `Store '${ds}' is not empty`);
        if (query.get('purge') === 'all' || query.get('purge') === 'true') rmSync(abs(store.database), { force: true });
        stores.delete(ds!);
        writeMaps();
        return send(res, 200, 'text/plain', '');
      }
    }
    if (c !== 'featuretypes') return notFound(res, 'resource');
    if (p.length === 5 || (p.length === 6 && ftName === '')) {
      if (method === 'GET')
        return json(
          res,
          200,
          list('featureTypes', 'featureType', [...store.featureTypes.keys()].sort(), (n) => href('workspaces', ws!, 'datastores', ds!, 'featuretypes', n)),
        );
      if (method === 'POST') {
        const ft = featureTypeBody(body, type);
        if (!ft.name) return send(res, 400, 'text/plain', 'A feature type needs a name');
        if (layerOf(ws!, ft.name)) return send(res, 500, 'text/plain', `Resource named '${ft.name}' already exists in namespace: '${ws}'`);
        const nativeName = ft.nativeName ?? ft.name;
        if (!tablesOf(abs(store.database)).includes(nativeName))
          return send(
            res,
            400,
            'text/plain',
            `Trying to create new feature type inside the store, but no attributes were specified and ${nativeName} is not a table of it`,
          );
        store.featureTypes.set(ft.name, { name: ft.name, nativeName, title: ft.title ?? ft.name, abstract: ft.abstract, style: 'generic' });
        writeMaps();
        return send(res, 201, 'text/plain', ft.name);
      }
    }
    const ft = store.featureTypes.get(ftName!);
    if (!ft) return notFound(res, `feature type ${ws}:${ftName}`);
    if (method === 'GET') return json(res, 200, featureTypeJson(ws!, store, ft));
    if (method === 'PUT') {
      const given = featureTypeBody(body, type);
      if (given.title) ft.title = given.title;
      if (given.abstract) ft.abstract = given.abstract;
      writeMaps();
      return send(res, 200, 'text/plain', '');
    }
    return send(res, 405, 'text/plain', 'Method not allowed');
  }

  const standIn = await serveStandIn(async (req, res, url) => {
    const body = await readBody(req);
    const parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
    if (parts[0] !== 'geoserver') return notFound(res, 'path');
    if (parts[1] === 'rest') {
      if (req.headers.authorization !== basicAuth(username, password)) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="GeoServer Realm"', 'content-type': 'text/plain' });
        return void res.end('HTTP 401 Unauthorized');
      }
      await rest(req, res, parts.slice(2), url.searchParams, body).catch((error: Error) => send(res, 500, 'text/plain', error.message));
      return;
    }
    const rest2 = parts.slice(1);
    const last = rest2[rest2.length - 1]?.toLowerCase();
    if (last === 'ows' || last === 'wfs') {
      const mapfile =
        rest2.length === 1
          ? path.join(mapsDir, 'all.map')
          : rest2.length === 2
            ? path.join(mapsDir, `${rest2[0]}.map`)
            : path.join(mapsDir, `${rest2[0]}__${rest2[1]}.map`);
      return mapserv(mapfile, new URLSearchParams(url.search), res);
    }
    return notFound(res, 'path');
  });
  base = `${standIn.url}/geoserver`;
  writeMaps();
  return {
    url: base,
    username,
    password,
    dataDir,
    get requests() {
      return requestLines(standIn.requests);
    },
    fileOf: (ws, name) => {
      const s = workspaces.get(ws)?.get(name);
      return s ? abs(s.database) : null;
    },
    async stop() {
      await standIn.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
