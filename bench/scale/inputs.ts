import { spawn } from 'node:child_process';
import path from 'node:path';
import { generatedGpkg } from '../points.js';

/** 1M polygons of 50 vertices (a 49-step circle, closed) with 20 attributes, by GDAL's SQLite dialect. */
export function polygonsFile(dir: string, count: number): string {
  const attributes = Array.from({ length: 18 }, (_, k) =>
    k % 3 === 0 ? `(i * ${k + 7}) % 1000 AS a${k}` : k % 3 === 1 ? `((i * ${k + 3}) % 997) / 7.0 AS a${k}` : `'value ' || ((i + ${k}) % 503) AS a${k}`,
  );
  return generatedGpkg(path.join(dir, `polygons-${count}.gpkg`), {
    what: `${count} polygons`,
    layer: 'polygons',
    geometryType: 'POLYGON',
    sql: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
     SELECT i AS id, 'parcel ' || i AS name, ${attributes.join(', ')},
            MakePolygon(MakeCircle(-180 + (i % 3600) / 10.0, -80 + (i / 3600) * 0.05, 0.02, 4326, ${360 / 49})) AS geom FROM n`,
  });
}

/*
 * The Jobs' Source files are served by a process of their own: the bench samples /proc every 250 ms
 * (synchronous reads of every process's stat, slow on a busy machine), which would stall a
 * download it served, the service's and the script's alike.
 */
const fileServerCode = `const http = require('http'), fs = require('fs'), path = require('path');
const dir = process.argv[1];
const server = http.createServer((req, res) => {
  const file = path.join(dir, path.basename((req.url || '').split('?')[0]));
  if (!fs.existsSync(file)) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/geopackage+sqlite3', 'content-length': fs.statSync(file).size });
  fs.createReadStream(file).pipe(res);
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

/** Serves the files of a folder by name over HTTP on 127.0.0.1; `base` is its URL. */
export async function startFileServer(dir: string): Promise<{ base: string; stop: () => void }> {
  const files = spawn(process.execPath, ['-e', fileServerCode, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => files.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
  const stop = () => void files.kill();
  process.on('exit', stop);
  return { base: `http://127.0.0.1:${port}`, stop };
}
