import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError } from '../../domain/errors.js';
import { errorText, openAs, scrubPaths, type DatasetRef } from '../gdal/gdal.js';
import { inputArgs, runGdalWrite } from '../gdal/translate.js';
import { stemOf } from './file-names.js';

/* CSV files whose header has one column, which GDAL 3.6's reader refuses: read through a padded copy. */

/** Whether the CSV's header has no separator outside quotes (GDAL's CSV reader refuses those). */
export async function isOneColumnCsv(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    let quoted = false;
    for (const ch of buf.subarray(0, bytesRead).toString('utf8')) {
      if (ch === '"') quoted = !quoted;
      else if (!quoted && (ch === '\n' || ch === '\r')) return true;
      else if (!quoted && ',;\t|'.includes(ch)) return false;
    }
    return true;
  } finally {
    await handle.close();
  }
}

const PAD_COLUMN = '__geoflow_pad';

/** Appends a second column to every record (outside quoted values): named in the header, empty below. */
function padRecords(): Transform {
  let quoted = false;
  let lineHasText = false;
  let header = true;
  const pad = () => {
    const text = header ? `,${PAD_COLUMN}` : ',';
    header = false;
    lineHasText = false;
    return text;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let out = '';
      for (const ch of chunk.toString('utf8')) {
        if (ch === '"') quoted = !quoted;
        if (!quoted && (ch === '\n' || ch === '\r')) {
          if (lineHasText) out += pad();
        } else {
          lineHasText = true;
        }
        out += ch;
      }
      done(null, out);
    },
    flush(done) {
      done(null, lineHasText ? pad() : '');
    },
  });
}

/**
 * GDAL 3.6's CSV reader refuses a file whose header has one column (`id\n1\n2\n`: nothing tells
 * it the separator). Such a file is read through a copy with an empty second column, with the
 * same open options (types detected, WKT read), into a GeoPackage named like the CSV; the padding
 * column is dropped there. The Workspace still says CSV.
 */
export async function readOneColumnCsv(ref: DatasetRef, dir: string): Promise<DatasetRef> {
  await mkdir(dir, { recursive: true });
  const stem = stemOf(ref.path);
  const padded = path.join(dir, `${stem}.csv`);
  const gpkg = path.join(dir, `${stem}.gpkg`);
  try {
    // Decoded by the read stream, so no chunk ends inside a multi-byte character.
    await pipeline(createReadStream(ref.path, { encoding: 'utf8' }), padRecords(), createWriteStream(padded));
    // The user's CSV is read by ogr2ogr in the sandbox, never by this process's GDAL (the API's,
    // for an upload). A GeoPackage layer without a CRS would read as "undefined geographic": it
    // gets the assumed one.
    await runGdalWrite(
      'ogr2ogr',
      ['-f', 'GPKG', ...(ref.assumedCrs ? ['-a_srs', ref.assumedCrs] : []), gpkg, ...inputArgs({ ...ref, path: padded })],
      { readable: [dir], writable: [dir], output: gpkg },
      { what: 'Reading the one-column CSV' },
    );
    // What GDAL wrote itself is opened here, only to drop the padding column.
    const out = await openAs('GPKG', gpkg, 'r+');
    try {
      const layer = out.layers.get(0);
      layer.fields.remove(layer.fields.indexOf(PAD_COLUMN));
    } finally {
      out.close();
    }
  } catch (err) {
    throw new DomainError('invalid_source', 'GDAL cannot read the one-column CSV', { reason: scrubPaths(errorText(err)) });
  } finally {
    await rm(padded, { force: true });
  }
  return { path: gpkg, openOptions: [], warnings: ref.warnings, uploadDriver: 'CSV', ...(ref.assumedCrs ? { assumedCrs: ref.assumedCrs } : {}) };
}
