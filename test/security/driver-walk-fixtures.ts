import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/*
 * Datasets that name a file outside their own folder, one way per GDAL driver that has such a
 * field (driver-walk.int.spec.ts walks them). Each is written into a fresh folder of its own
 * (`data`), beside a sibling folder (`outside`) holding a canary: a file with random content that
 * nothing but the reference leads to. The spec first lets plain GDAL read each dataset on this
 * machine (the control: the canary must come out, else the fixture proves nothing), then asks
 * the service. The other drivers are listed with the reason their files cannot name another
 * file (noReferenceField), or as references not crafted yet (uncrafted).
 */

export interface Canary {
  /** 64 ASCII characters, random: what a read of the file would show. */
  text: string;
  /** Its bytes: the pixel values of a raster that reads the file. */
  bytes: Buffer;
}

export function newCanary(): Canary {
  const text = `canary${randomBytes(29).toString('hex')}`;
  return { text, bytes: Buffer.from(text, 'latin1') };
}

export interface Place {
  /** The dataset's own folder: all a sandboxed host may read of it. */
  data: string;
  /** The sibling folder with the canary. */
  outside: string;
  /** Scratch room for base files (neither the dataset nor the canary). */
  work: string;
  /** Whether the dataset names the canary by a `../` path or by its absolute path. */
  how: 'relative' | 'absolute';
  canary: Canary;
}

export interface Fixture {
  /** What the service is given (a file, or a folder). */
  open: string;
  kind: 'vector' | 'raster';
  /** What the control opens when it differs (a subdataset name). */
  controlPath?: string;
  /** Layers to ask for by name besides those GDAL lists (a table it does not list still opens by name). */
  layers?: string[];
  /** How the canary's bytes become pixel values when not one byte each. */
  pixels?: 'int16be';
  /** Extra gdal_translate arguments of the control (a window of a large raster). */
  controlArgs?: string[];
}

export interface Craft {
  /** Short description of the reference, for test names. */
  field: string;
  make(p: Place): Fixture;
  /** Why the format names files only relatively (an absolute name is joined to the folder), when so. */
  relativeOnly?: string;
  /** A tool the fixture needs that may be missing: the reason to skip it, or null. */
  missing?: () => string | null;
  /** The driver plain GDAL reports when it is not this one (KMLSUPEROVERLAY hands back a VRT). */
  reportedAs?: string;
}

// ---- helpers ---------------------------------------------------------------------------------

export function run(cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
}

function write(file: string, content: string | Buffer): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

function edit(file: string, change: (text: string) => string): void {
  const before = readFileSync(file, 'latin1');
  const after = change(before);
  if (after === before) throw new Error(`fixture edit changed nothing in ${path.basename(file)}`);
  writeFileSync(file, after, 'latin1');
}

/** How the dataset names `file` in the outside folder. */
export function ref(p: Place, file: string): string {
  return p.how === 'relative' ? `../${path.basename(p.outside)}/${file}` : path.join(p.outside, file);
}

/** outside/<name>: the canary's 64 bytes and a newline. Returns how the dataset names it. */
function secretText(p: Place, name = 'secret.txt'): string {
  write(path.join(p.outside, name), `${p.canary.text}\n`);
  return ref(p, name);
}

/**
 * outside/<name>: a raster of another upload, 8×8 Byte pixels that are the canary's bytes, in
 * EPSG:4326 near (7, 46), with the canary's text as metadata. Written by gdal_translate from a raw
 * file with an ENVI header. Returns how the dataset names it.
 */
function secretRaster(p: Place, name = 'secret.tif', format = 'GTiff'): string {
  const raw = write(path.join(p.work, 'canary-src.bil'), p.canary.bytes);
  write(
    path.join(p.work, 'canary-src.hdr'),
    'ENVI\nsamples = 8\nlines = 8\nbands = 1\nheader offset = 0\nfile type = ENVI Standard\ndata type = 1\ninterleave = bsq\nbyte order = 0\n',
  );
  mkdirSync(p.outside, { recursive: true });
  run('gdal_translate', [
    '-q',
    '-of',
    format,
    '-a_srs',
    'EPSG:4326',
    '-a_ullr',
    '7',
    '46.08',
    '7.08',
    '46',
    '-mo',
    `NOTE=${p.canary.text}`,
    raw,
    path.join(p.outside, name),
  ]);
  return ref(p, name);
}

/** work/base.tif: an 8×8 Byte raster of zeros (what a header's own data would be). */
function baseRaster(p: Place): string {
  const file = path.join(p.work, 'base.tif');
  run('gdal_create', [
    '-q',
    '-of',
    'GTiff',
    '-outsize',
    '8',
    '8',
    '-bands',
    '1',
    '-ot',
    'Byte',
    '-burn',
    '0',
    '-a_srs',
    'EPSG:4326',
    '-a_ullr',
    '7',
    '46.08',
    '7.08',
    '46',
    file,
  ]);
  return file;
}

/** A raster written by gdal_translate into the data folder, for its header to be edited. */
function translated(p: Place, format: string, name: string, options: string[] = []): string {
  mkdirSync(p.data, { recursive: true });
  const out = path.join(p.data, name);
  run('gdal_translate', ['-q', '-of', format, ...options, baseRaster(p), out]);
  return out;
}

const PDS3_IMAGE = (pointer: string) =>
  [
    'PDS_VERSION_ID = PDS3',
    'RECORD_TYPE = FIXED_LENGTH',
    'RECORD_BYTES = 8',
    'FILE_RECORDS = 8',
    `^IMAGE = ${pointer}`,
    'OBJECT = IMAGE',
    '  LINES = 8',
    '  LINE_SAMPLES = 8',
    '  SAMPLE_TYPE = MSB_UNSIGNED_INTEGER',
    '  SAMPLE_BITS = 8',
    '  BANDS = 1',
    '  BAND_STORAGE_TYPE = BAND_SEQUENTIAL',
    'END_OBJECT = IMAGE',
    'END',
    '',
  ].join('\r\n');

// ---- HDF4 and HDF5 files, written by small C programs --------------------------------------
// Neither library has a writer here that sets external storage (no h5py, no pyhdf), but the
// headers and compilers that build gdal-async against the system GDAL are present: the programs
// are compiled once per run.

const H5_EXTERNAL = `#include <hdf5.h>
#include <string.h>
/* OUT NAME MODE: an 8x8 uint8 dataset whose bytes are those of file NAME (HDF5 external storage); MODE plain or bag. */
int main(int argc, char **argv) {
  if (argc < 4) return 2;
  hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return 1;
  hsize_t dims[2] = {8, 8};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (H5Pset_external(dcpl, argv[2], 0, 64) < 0) return 1;
  hid_t parent = f;
  const char *name = "canary";
  int bag = strcmp(argv[3], "bag") == 0;
  if (bag) {
    parent = H5Gcreate2(f, "BAG_root", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    name = "elevation";
    hid_t vs = H5Screate(H5S_SCALAR);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 6);
    hid_t a = H5Acreate2(parent, "Bag Version", st, vs, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, st, "1.6.2");
    H5Aclose(a);
    const char *xml = "<?xml version=\\"1.0\\"?><gmi:MI_Metadata xmlns:gmi=\\"http://www.isotc211.org/2005/gmi\\"></gmi:MI_Metadata>";
    hsize_t n = strlen(xml);
    hid_t ms = H5Screate_simple(1, &n, NULL);
    hid_t md = H5Dcreate2(parent, "metadata", H5T_C_S1, ms, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(md, H5T_C_S1, H5S_ALL, H5S_ALL, H5P_DEFAULT, xml);
    H5Dclose(md);
  }
  hid_t d = H5Dcreate2(parent, name, H5T_NATIVE_UINT8, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) return 1;
  if (bag) {
    float zero[64] = {0};
    hid_t u = H5Dcreate2(parent, "uncertainty", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(u, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, zero);
    H5Dclose(u);
  }
  H5Dclose(d);
  if (parent != f) H5Gclose(parent);
  H5Fclose(f);
  return 0;
}
`;

const H4_EXTERNAL = `#include <mfhdf.h>
/* OUT NAME: an 8x8 uint8 SDS whose data are the bytes of file NAME (an HDF4 external element). */
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int32 sd = SDstart(argv[1], DFACC_CREATE);
  int32 dims[2] = {8, 8};
  int32 sds = SDcreate(sd, "canary", DFNT_UINT8, 2, dims);
  if (sd < 0 || sds < 0 || SDsetexternalfile(sds, argv[2], 0) < 0) return 1;
  SDendaccess(sds);
  SDend(sd);
  return 0;
}
`;

const programs = new Map<string, string>();
let toolDir: string | undefined;
/** Where the compiled helper programs go (one folder per process). */
export function setToolDir(dir: string): void {
  toolDir = dir;
}

function compiled(name: string, source: string, compile: (src: string, out: string) => [string, string[]]): string {
  const known = programs.get(name);
  if (known) return known;
  const dir = toolDir ?? path.join(os.tmpdir(), 'driver-walk-tools');
  mkdirSync(dir, { recursive: true });
  const src = write(path.join(dir, `${name}.c`), source);
  const out = path.join(dir, name);
  const [cmd, args] = compile(src, out);
  // h5cc leaves its object file in the working directory: the tool folder, not the project.
  run(cmd, args, { cwd: dir });
  programs.set(name, out);
  return out;
}

const h5External = () => compiled('h5ext', H5_EXTERNAL, (src, out) => ['h5cc', ['-o', out, src]]);
const h4External = () => compiled('h4ext', H4_EXTERNAL, (src, out) => ['gcc', ['-o', out, src, '-I/usr/include/hdf', '-lmfhdfalt', '-ldfalt']]);

function missingTool(...tools: string[]): string | null {
  for (const tool of tools) {
    if (tool.startsWith('/') ? !existsSync(tool) : spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed`;
  }
  return null;
}

/** An HDF5 file whose 8×8 dataset is stored in the canary (external storage: any file's bytes). */
function hdf5External(p: Place, name: string, mode: 'plain' | 'bag'): string {
  const out = path.join(p.data, name);
  // A relative external name is resolved from the working directory of whoever reads the file.
  run(h5External(), [out, secretText(p), mode], { cwd: p.data });
  return out;
}

// ---- the drivers whose files can name another file -----------------------------------------

/** outside/secret.ref: another user's Idrisi reference system file, named after the canary. */
function idrisiRef(p: Place): void {
  write(
    path.join(p.outside, 'secret.ref'),
    `ref. system : ${p.canary.text}\nprojection : Transverse Mercator\ndatum : WGS84\ndelta WGS84 : 0 0 0\nellipsoid : WGS 84\nmajor s-ax : 6378137\nminor s-ax : 6356752.314\norigin long : 9\norigin lat : 0\norigin X : 500000\norigin Y : 0\nscale fac : 0.9996\nunits : m\nparameters : 0\n`,
  );
}

/** EDIGEO lines: a 5-character key, the value's length on 2 digits, ':', the value. */
const edigeo = (lines: [string, string][]) => `${lines.map(([key, value]) => `${key}${String(value.length).padStart(2, '0')}:${value}`).join('\r\n')}\r\n`;

/**
 * Where GDAL puts an ECRG frame (ecrgtocdataset.cpp, GetExtent: MIL-PRF-32283 and MIL-A-89007):
 * the frame must have exactly this georeferencing, 2304 pixels square, or GDAL skips it.
 */
function ecrgFrameGeoTransform(name: string, scale: number, zone: number): number[] {
  const zoneUpperLat = [0, 32, 48, 56, 64, 68, 72, 76, 80];
  const aCst = [369664, 302592, 245760, 199168, 163328, 137216, 110080, 82432];
  const ceilRound = (a: number, b: number) => Math.ceil(a / b) * b;
  const nearRound = (a: number, b: number) => Math.floor(a / b + 0.5) * b;
  const ew = (nearRound(ceilRound(aCst[zone - 1]! * (1e6 / scale), 512) / 1.5, 256) / 256) * 384;
  const cols = Math.ceil(ew / 2304);
  const ns = (nearRound(ceilRound(400384 * (1e6 / scale), 512) / 4 / 1.5, 256) / 256) * 384;
  const pixelY = 90 / ns;
  const frameHeight = pixelY * 2304;
  const upper = Math.ceil(zoneUpperLat[zone]! / frameHeight);
  const rows = upper - Math.floor(zoneUpperLat[zone - 1]! / frameHeight);
  let frame = 0;
  for (const ch of name.slice(0, 10).toLowerCase()) {
    const v = ch <= '9' ? ch.charCodeAt(0) - 48 : ch <= 'h' ? ch.charCodeAt(0) - 87 : ch <= 'n' ? ch.charCodeAt(0) - 88 : ch.charCodeAt(0) - 89;
    frame = frame * 34 + v;
  }
  const y = Math.floor(frame / cols);
  const x = frame % cols;
  const pixelX = 360 / ew;
  const maxY = frameHeight * upper - (rows - 1 - y) * frameHeight;
  return [-180 + x * pixelX * 2304, pixelX, 0, maxY, 0, -pixelY];
}

// SQLite-based files: SpatiaLite, which GDAL loads into its SQLite connections, brings virtual
// table modules that read files by name (VirtualText). A relative name is resolved from the
// working directory of whoever reads the file: the statements run from the dataset's folder.

/** outside/secret.csv (another user's CSV with the canary) as the virtual table `canary`. */
function virtualCsv(p: Place): string {
  write(path.join(p.outside, 'secret.csv'), `id,text\n1,${p.canary.text}\n`);
  return `CREATE VIRTUAL TABLE canary USING VirtualText('${ref(p, 'secret.csv')}', 'UTF-8', 1, POINT, DOUBLEQUOTE, ',')`;
}

/** A SQLite-based file written by ogr2ogr (a one-row table), to add SQL objects to. */
function sqliteFrom(p: Place, format: string, name: string): string {
  mkdirSync(p.data, { recursive: true });
  const db = path.join(p.data, name);
  run('ogr2ogr', ['-f', format, db, write(path.join(p.work, 'src.csv'), 'id,text\n1,plain\n')]);
  return db;
}

/** Runs SQL statements on a SQLite-based file through GDAL's SQLite driver (`skip`: the driver that would claim it first). */
function runSql(p: Place, db: string, statements: string[], skip?: string): void {
  for (const sql of statements) run('ogrinfo', [...(skip ? ['--config', 'GDAL_SKIP', skip] : []), db, '-sql', sql], { cwd: p.data });
}

/** Most drivers join the name to the folder of the file that holds it, absolute or not. */
const joined = 'GDAL joins the name to the folder of the file that holds it (CPLFormFilename), so an absolute name points inside that folder';

/**
 * A raster GDAL writes as `format`, whose header is then edited to name the canary text file
 * (`change` gets the header and the name): the shape of most label formats' fixtures.
 */
function editedHeader(field: string, format: string, name: string, options: string[], change: (header: string, target: string) => string): Craft {
  return {
    field,
    make(p) {
      const file = translated(p, format, name, options);
      edit(file, (header) => change(header, secretText(p)));
      return { open: file, kind: 'raster' };
    },
    relativeOnly: joined,
  };
}

export const crafted: Record<string, Craft[]> = {
  PDS4: [
    {
      field: 'a Table_Delimited File/file_name',
      make(p) {
        mkdirSync(p.data, { recursive: true });
        // One field per record: every line of the named file is a row.
        const src = write(
          path.join(p.work, 'rows.geojson'),
          '{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"text":"plain"},"geometry":null}]}',
        );
        const label = path.join(p.data, 'label.xml');
        run('ogr2ogr', ['-f', 'PDS4', label, src, '-lco', 'TABLE_TYPE=DELIMITED']);
        edit(label, (s) =>
          s
            .replace(/<file_name>[^<]*<\/file_name>/, `<file_name>${secretText(p)}</file_name>`)
            .replace(/(<Table_Delimited>[\s\S]*?<offset unit="byte">)\d+/, '$10'),
        );
        return { open: label, kind: 'vector' };
      },
      relativeOnly: joined,
    },
    editedHeader('an Array_2D_Image File/file_name', 'PDS4', 'image.xml', [], (s, target) =>
      s.replace(/<file_name>[^<]*<\/file_name>/, `<file_name>${target}</file_name>`),
    ),
  ],
  PDS: [
    {
      field: 'a PDS3 ^IMAGE pointer',
      make(p) {
        return { open: write(path.join(p.data, 'image.lbl'), PDS3_IMAGE(`"${secretText(p)}"`)), kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  OGR_PDS: [
    {
      field: 'a PDS3 ^TABLE pointer',
      make(p) {
        const label = [
          'PDS_VERSION_ID = PDS3',
          'RECORD_TYPE = FIXED_LENGTH',
          'RECORD_BYTES = 65',
          'FILE_RECORDS = 1',
          `^TABLE = "${secretText(p)}"`,
          'OBJECT = TABLE',
          '  INTERCHANGE_FORMAT = ASCII',
          '  ROWS = 1',
          '  COLUMNS = 1',
          '  ROW_BYTES = 65',
          '  OBJECT = COLUMN',
          '    NAME = TEXT',
          '    DATA_TYPE = CHARACTER',
          '    START_BYTE = 1',
          '    BYTES = 64',
          '  END_OBJECT = COLUMN',
          'END_OBJECT = TABLE',
          'END',
          '',
        ].join('\r\n');
        return { open: write(path.join(p.data, 'table.lbl'), label), kind: 'vector' };
      },
      relativeOnly: joined,
    },
  ],
  ISIS3: [
    editedHeader('a detached ^Core', 'ISIS3', 'cube.lbl', ['-co', 'DATA_LOCATION=EXTERNAL'], (s, target) =>
      s.replace(/\^Core\s*=\s*\S+/, `^Core = "${target}"`),
    ),
  ],
  ISIS2: [
    editedHeader('a detached ^QUBE', 'ISIS2', 'cube.lbl', ['-co', 'LABELING_METHOD=DETACHED'], (s, target) =>
      s.replace(/\^QUBE\s*=\s*\S+/, `^QUBE = "${target}"`),
    ),
  ],
  ERS: [editedHeader('DataFile', 'ERS', 'image.ers', [], (s, target) => s.replace(/(DataType\s*=\s*Raster)/, `$1\n\tDataFile\t= "${target}"`))],
  PAux: [
    {
      field: 'AuxilaryTarget',
      make(p) {
        // GDAL reads the header of the target (its own .aux), so the target is another PAux
        // dataset: another user's upload.
        translated(p, 'PAux', 'image.raw');
        const aux = path.join(p.data, 'image.aux');
        write(path.join(p.outside, 'secret.raw'), p.canary.bytes);
        write(path.join(p.outside, 'secret.aux'), readFileSync(aux, 'latin1').replace(/AuxilaryTarget: .*/, 'AuxilaryTarget: secret.raw'));
        edit(aux, (s) => s.replace(/AuxilaryTarget: .*/, `AuxilaryTarget: ${ref(p, 'secret.raw')}`));
        // GDAL looks for the target's .aux name among the opened file's siblings first.
        write(path.join(p.data, 'secret.aux'), '');
        return { open: aux, kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  MRF: [
    {
      field: 'DataFile',
      make(p) {
        const mrf = translated(p, 'MRF', 'image.mrf', ['-co', 'COMPRESS=NONE', '-co', 'BLOCKSIZE=8']);
        edit(mrf, (s) => s.replace(/<\/Raster>/, `<DataFile>${secretText(p)}</DataFile></Raster>`));
        // The index: the one tile at offset 0, 64 bytes long (big-endian 64-bit integers).
        const index = Buffer.alloc(16);
        index.writeBigUInt64BE(64n, 8);
        writeFileSync(path.join(p.data, 'image.idx'), index);
        return { open: mrf, kind: 'raster' };
      },
    },
  ],
  TIL: [
    {
      field: 'TILE_1.filename',
      make(p) {
        const til = [
          'bandId = "P";',
          'generationTime = 2020-01-01T00:00:00.000000Z;',
          'tileSizeX = 8;',
          'tileSizeY = 8;',
          'tileUnits = "Pixels";',
          'tileOverlap = 0;',
          'numTiles = 1;',
          'BEGIN_GROUP = TILE_1',
          `\tfilename = "${secretRaster(p)}";`,
          '\tULColOffset = 0;',
          '\tULRowOffset = 0;',
          '\tLRColOffset = 7;',
          '\tLRRowOffset = 7;',
          'END_GROUP = TILE_1',
          'END;',
          '',
        ].join('\n');
        write(
          path.join(p.data, 'image.IMD'),
          'numRows = 8;\nnumColumns = 8;\nbitsPerPixel = 8;\nBEGIN_GROUP = IMAGE_1\n\tsatId = "QB02";\nEND_GROUP = IMAGE_1\nEND;\n',
        );
        return { open: write(path.join(p.data, 'image.til'), til), kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  MAP: [
    {
      field: 'the image file line',
      make(p) {
        const map = [
          'OziExplorer Map Data File Version 2.2',
          'canary map',
          secretRaster(p),
          '1 ,Map Code,',
          'WGS 84,WGS 84,   0.0000,   0.0000,WGS 84',
          'Reserved 1',
          'Reserved 2',
          'Magnetic Variation,,,E',
          'Map Projection,Latitude/Longitude,PolyCal,No,AutoCalOnly,No,BSBUseWPX,No',
          'Point01,xy,    0,    0,in, deg,  46, 4.8,N,   7, 0.0,E, grid,   ,           ,           ,N',
          'Point02,xy,    8,    0,in, deg,  46, 4.8,N,   7, 4.8,E, grid,   ,           ,           ,N',
          'Point03,xy,    8,    8,in, deg,  46, 0.0,N,   7, 4.8,E, grid,   ,           ,           ,N',
          'Point04,xy,    0,    8,in, deg,  46, 0.0,N,   7, 0.0,E, grid,   ,           ,           ,N',
          'Projection Setup,,,,,,,,,,',
          'Map Feature = MF ; Map Comment = MC     These follow if they exist',
          'Track File = TF      These follow if they exist',
          'Moving Map Parameters = MM?    These follow if they exist',
          'MM0,Yes',
          'MMPNUM,4',
          'MMPXY,1,0,0',
          'MMPXY,2,8,0',
          'MMPXY,3,8,8',
          'MMPXY,4,0,8',
          'MMPLL,1,   7.000000,  46.080000',
          'MMPLL,2,   7.080000,  46.080000',
          'MMPLL,3,   7.080000,  46.000000',
          'MMPLL,4,   7.000000,  46.000000',
          'IWH,Map Image Width/Height,8,8',
          '',
        ].join('\r\n');
        return { open: write(path.join(p.data, 'image.map'), map), kind: 'raster' };
      },
    },
  ],
  KMLSUPEROVERLAY: [
    {
      field: 'a GroundOverlay Icon href',
      make(p) {
        const kml = `<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2"><Document><GroundOverlay><name>o</name>
<Icon><href>${secretRaster(p, 'secret.png', 'PNG')}</href></Icon>
<LatLonBox><north>46.08</north><south>46</south><east>7.08</east><west>7</west></LatLonBox>
</GroundOverlay></Document></kml>
`;
        return { open: write(path.join(p.data, 'overlay.kml'), kml), kind: 'raster' };
      },
      reportedAs: 'VRT',
      relativeOnly: joined,
    },
  ],
  DIMAP: [
    {
      field: 'Data_File/DATA_FILE_PATH href',
      make(p) {
        const dim = `<?xml version="1.0" encoding="ISO-8859-1"?>
<Dimap_Document name="METADATA.DIM">
 <Metadata_Id><METADATA_FORMAT version="1.1">DIMAP</METADATA_FORMAT></Metadata_Id>
 <Raster_Dimensions><NCOLS>8</NCOLS><NROWS>8</NROWS><NBANDS>1</NBANDS></Raster_Dimensions>
 <Data_Access>
  <DATA_FILE_FORMAT>GEOTIFF</DATA_FILE_FORMAT>
  <Data_File><DATA_FILE_PATH href="${secretRaster(p)}"/></Data_File>
 </Data_Access>
</Dimap_Document>
`;
        return { open: write(path.join(p.data, 'METADATA.DIM'), dim), kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  STACIT: [
    {
      field: 'an item asset href',
      make(p) {
        const item = {
          type: 'FeatureCollection',
          stac_version: '1.0.0',
          stac_extensions: [],
          features: [
            {
              type: 'Feature',
              stac_version: '1.0.0',
              stac_extensions: ['proj'],
              id: 'a',
              geometry: null,
              properties: { datetime: '2021-07-19T10:57:30Z', 'proj:epsg': 4326 },
              collection: 'c',
              assets: {
                B01: {
                  type: 'image/tiff; application=geotiff',
                  roles: ['data'],
                  href: secretRaster(p),
                  'proj:bbox': [7, 46, 7.08, 46.08],
                  'proj:transform': [0.01, 0, 7, 0, -0.01, 46.08],
                },
              },
            },
          ],
        };
        return { open: write(path.join(p.data, 'items.json'), JSON.stringify(item, null, 1)), kind: 'raster' };
      },
      reportedAs: 'VRT',
    },
  ],
  STACTA: [
    {
      field: 'an asset_templates href',
      make(p) {
        mkdirSync(path.join(p.outside, '0', '0'), { recursive: true });
        secretRaster(p, path.join('0', '0', '0.tif'));
        const tms = {
          type: 'TileMatrixSetType',
          title: 'small',
          identifier: 'Small',
          boundingBox: { type: 'BoundingBoxType', crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84', lowerCorner: [7, 46], upperCorner: [7.08, 46.08] },
          supportedCRS: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84',
          tileMatrix: [
            {
              type: 'TileMatrixType',
              identifier: '0',
              scaleDenominator: 3975696.07,
              topLeftCorner: [7, 46.08],
              tileWidth: 8,
              tileHeight: 8,
              matrixWidth: 1,
              matrixHeight: 1,
            },
          ],
        };
        const doc = {
          stac_version: '1.0.0-beta.2',
          stac_extensions: ['tiled-assets'],
          id: 'x',
          type: 'Feature',
          bbox: [7, 46, 7.08, 46.08],
          geometry: {
            type: 'Polygon',
            coordinates: [
              [
                [7, 46],
                [7.08, 46],
                [7.08, 46.08],
                [7, 46.08],
                [7, 46],
              ],
            ],
          },
          properties: {
            datetime: '2019-01-01T00:00:00Z',
            'tiles:tile_matrix_links': { Small: { url: '#', limits: { '0': { min_tile_col: 0, max_tile_col: 0, min_tile_row: 0, max_tile_row: 0 } } } },
            'tiles:tile_matrix_sets': { Small: tms },
          },
          asset_templates: { bands: { href: `${ref(p, 'x').slice(0, -1)}{TileMatrix}/{TileRow}/{TileCol}.tif`, type: 'image/tiff; application=geotiff' } },
        };
        return { open: write(path.join(p.data, 'tiles.json'), JSON.stringify(doc, null, 1)), kind: 'raster' };
      },
    },
  ],
  GML: [
    {
      field: "an xs:include in the schema found by the file's own name",
      make(p) {
        // The included schema: another user's, whose one field is named after the canary.
        const field = p.canary.text;
        write(
          path.join(p.outside, 'secret.xsd'),
          `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema targetNamespace="http://ogr.maptools.org/" xmlns:ogr="http://ogr.maptools.org/" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:gml="http://www.opengis.net/gml" elementFormDefault="qualified" version="1.0">
<xs:import namespace="http://www.opengis.net/gml" schemaLocation="http://schemas.opengis.net/gml/3.1.1/base/gml.xsd"/>
<xs:element name="t" type="ogr:t_Type" substitutionGroup="gml:_Feature"/>
<xs:complexType name="t_Type"><xs:complexContent><xs:extension base="gml:AbstractFeatureType"><xs:sequence>
<xs:element name="geometryProperty" type="gml:PointPropertyType" nillable="true" minOccurs="0" maxOccurs="1"/>
<xs:element name="${field}" nillable="true" minOccurs="0" maxOccurs="1"><xs:simpleType><xs:restriction base="xs:string"><xs:maxLength value="64"/></xs:restriction></xs:simpleType></xs:element>
</xs:sequence></xs:extension></xs:complexContent></xs:complexType>
</xs:schema>
`,
        );
        write(
          path.join(p.data, 'features.xsd'),
          `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema targetNamespace="http://ogr.maptools.org/" xmlns:ogr="http://ogr.maptools.org/" xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified" version="1.0">
<xs:include schemaLocation="${ref(p, 'secret.xsd')}"/>
</xs:schema>
`,
        );
        const gml = `<?xml version="1.0" encoding="utf-8" ?>
<ogr:FeatureCollection xmlns:ogr="http://ogr.maptools.org/" xmlns:gml="http://www.opengis.net/gml">
  <gml:featureMember><ogr:t gml:id="t.0"><ogr:geometryProperty><gml:Point srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos>46 7</gml:pos></gml:Point></ogr:geometryProperty></ogr:t></gml:featureMember>
</ogr:FeatureCollection>
`;
        return { open: write(path.join(p.data, 'features.gml'), gml), kind: 'vector' };
      },
    },
  ],
  'MapInfo File': [
    {
      field: 'a seamless table row naming a base table',
      make(p) {
        // The base table: another user's MapInfo table holding the canary.
        const base = write(path.join(p.work, 'base.csv'), `WKT,text\n"POINT (7.01 46.01)",${p.canary.text}\n`);
        run('ogr2ogr', [
          '-f',
          'MapInfo File',
          path.join(p.outside, 'secret.tab'),
          base,
          '-oo',
          'GEOM_POSSIBLE_NAMES=WKT',
          '-oo',
          'KEEP_GEOM_COLUMNS=NO',
          '-a_srs',
          'EPSG:4326',
        ]);
        const index = write(
          path.join(p.work, 'index.csv'),
          `WKT,Table,Description\n"POLYGON ((7 46,7.08 46,7.08 46.08,7 46.08,7 46))",${ref(p, 'secret.tab')},base\n`,
        );
        const tab = path.join(p.data, 'seamless.tab');
        mkdirSync(p.data, { recursive: true });
        run('ogr2ogr', ['-f', 'MapInfo File', tab, index, '-oo', 'GEOM_POSSIBLE_NAMES=WKT', '-oo', 'KEEP_GEOM_COLUMNS=NO', '-a_srs', 'EPSG:4326']);
        edit(tab, (s) =>
          s.replace(/(Definition Table[\s\S]*?)(\r?\n)(CoordSys|$)/, '$1$2begin_metadata$2"\\IsSeamless" = "TRUE"$2"\\IsReadOnly" = "FALSE"$2end_metadata$2$3'),
        );
        return { open: tab, kind: 'vector' };
      },
      relativeOnly: joined,
    },
  ],
  SQLite: [
    {
      field: 'a SpatiaLite VirtualText table',
      make(p) {
        const db = sqliteFrom(p, 'SQLite', 'db.sqlite');
        runSql(p, db, [virtualCsv(p)]);
        // GDAL does not list a virtual table, but opens it by name: a preview may ask for it.
        return { open: db, kind: 'vector', layers: ['canary'] };
      },
    },
  ],
  GPKG: [
    {
      field: 'a SpatiaLite VirtualText table listed in gpkg_contents',
      make(p) {
        const db = sqliteFrom(p, 'GPKG', 'db.gpkg');
        runSql(p, db, [virtualCsv(p), "INSERT INTO gpkg_contents (table_name, data_type, identifier) VALUES ('canary', 'attributes', 'canary')"]);
        return { open: db, kind: 'vector' };
      },
    },
  ],
  MBTiles: [
    {
      field: 'its metadata table as a view of a SpatiaLite VirtualText table',
      make(p) {
        const db = translated(p, 'MBTiles', 'tiles.mbtiles');
        runSql(
          p,
          db,
          [
            'ALTER TABLE metadata RENAME TO metadata_own',
            virtualCsv(p),
            "CREATE VIEW metadata AS SELECT name, value FROM metadata_own UNION ALL SELECT 'description', text FROM canary",
          ],
          'MBTiles',
        );
        return { open: db, kind: 'raster' };
      },
    },
  ],
  RST: [
    {
      field: "the .rdc's ref. system (a .ref file)",
      make(p) {
        const image = translated(p, 'RST', 'image.rst');
        idrisiRef(p);
        edit(path.join(p.data, 'image.rdc'), (s) => s.replace(/ref\. system : .*/, `ref. system : ${ref(p, 'secret')}`));
        return { open: image, kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  ILWIS: [
    {
      field: "a map list's Map0",
      make(p) {
        // The listed map: another user's ILWIS raster holding the canary.
        secretRaster(p, 'secret.mpr', 'ILWIS');
        mkdirSync(p.data, { recursive: true });
        const list = path.join(p.data, 'list.mpl');
        write(list, `[Ilwis]\r\nType=MapList\r\n\r\n[MapList]\r\nGeoRef=none.grf\r\nMap0=${ref(p, 'secret.mpr')}\r\nMaps=1\r\nSize=8 8\r\n`);
        return { open: list, kind: 'raster' };
      },
    },
  ],
  HFA: [
    {
      field: "ImgExternalRaster's fileName (an .ige spill file)",
      make(p) {
        // The spill file: another user's .ige, written with the canary's pixels.
        const source = secretRaster(p, 'secret.tif');
        run('gdal_translate', ['-q', '-of', 'HFA', '-co', 'USE_SPILL=YES', path.resolve(p.data, source), path.join(p.outside, 'secret.img')]);
        // GDAL writes the spill name as <stem>.ige: a stem as long as the reference lets the
        // name be replaced in place.
        const target = ref(p, 'secret.ige');
        const stem = 'x'.repeat(target.length - 4);
        const image = translated(p, 'HFA', `${stem}.img`, ['-co', 'USE_SPILL=YES']);
        const bytes = readFileSync(image);
        const at = bytes.indexOf(Buffer.from(`${stem}.ige`));
        if (at < 0) throw new Error('no spill file name in the .img');
        bytes.write(target, at, 'latin1');
        writeFileSync(image, bytes);
        return { open: image, kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  PCIDSK: [
    {
      field: "a FILE-interleaved channel's file name",
      make(p) {
        const image = translated(p, 'PCIDSK', 'image.pix', ['-co', 'INTERLEAVING=FILE']);
        const target = ref(p, 'secret.txt');
        secretText(p);
        const bytes = readFileSync(image);
        const name = Buffer.from('image.001'.padEnd(64, ' '));
        const at = bytes.indexOf(name);
        if (at < 0 || target.length > 64) throw new Error('no 64-character channel file name to replace');
        bytes.write(target.padEnd(64, ' '), at, 'latin1');
        writeFileSync(image, bytes);
        return { open: image, kind: 'raster' };
      },
    },
  ],
  NDF: [
    {
      field: 'BAND1_FILENAME',
      make(p) {
        const header = [
          'NDF_REVISION=2/0.0/1993-01-29/2.0;',
          'DATA_SET_TYPE=EDC_TM;',
          'PIXEL_FORMAT=BYTE;',
          'BITS_PER_PIXEL=8;',
          'DATA_FILE_INTERLEAVING=BSQ;',
          'PIXELS_PER_LINE=8;',
          'LINES_PER_DATA_FILE=8;',
          'NUMBER_OF_BANDS_IN_VOLUME=1;',
          `BAND1_FILENAME=${secretText(p)};`,
          'BAND1_NAME=canary;',
          'END_OF_HDR;',
          '',
        ].join('\n');
        return { open: write(path.join(p.data, 'image.H1'), header), kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  EIR: [
    {
      field: 'PIXEL_FILES',
      make(p) {
        const header = [
          'IMAGINE_RAW_FILE',
          'WIDTH 8',
          'HEIGHT 8',
          'NUM_LAYERS 1',
          `PIXEL_FILES ${secretText(p)}`,
          'FORMAT BSQ',
          'DATA_TYPE U8',
          'BYTE_ORDER LSB',
          'END_RAW_FILE',
          '',
        ].join('\n');
        return { open: write(path.join(p.data, 'image.raw'), header), kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  SNODAS: [
    {
      field: 'Data file pathname',
      make(p) {
        const header = [
          'Format version: NOHRSC GIS/RS raster file v1.1',
          `Data file pathname: ${secretText(p)}`,
          'Description: canary',
          'Data units: Meters',
          'Data type: integer',
          'Data bytes per pixel: 2',
          'Number of columns: 8',
          'Number of rows: 4',
          'Projected: no',
          'Horizontal datum: WGS84',
          'Minimum x-axis coordinate: 7',
          'Maximum x-axis coordinate: 7.08',
          'Minimum y-axis coordinate: 46',
          'Maximum y-axis coordinate: 46.04',
          '',
        ].join('\n');
        return { open: write(path.join(p.data, 'image.hdr'), header), kind: 'raster', pixels: 'int16be' };
      },
      relativeOnly: joined,
    },
  ],
  FAST: [
    {
      field: 'FILENAME (29 characters)',
      make(p) {
        const name = secretText(p);
        if (name.length > 29) throw new Error('FAST file names have 29 characters at most');
        const header =
          `${'REQ ID =0000000000000000000'.padEnd(52, ' ')}ACQUISITION DATE =20000101 SATELLITE =LANDSAT7  SENSOR =ETM+     ` +
          `FILENAME =${name.padEnd(29, ' ')} ` +
          'PIXELS PER LINE =    8 LINES PER BAND =    8 OUTPUT BITS PER PIXEL = 8 ' +
          'BIASES AND GAINS IN ASCENDING BAND NUMBER ORDER  0.0 1.0 ';
        return { open: write(path.join(p.data, 'header.dat'), header.padEnd(1536, ' ')), kind: 'raster' };
      },
      relativeOnly: 'the name has 29 characters at most, too few for an absolute path here',
    },
  ],
  HDF5: [
    {
      field: 'a dataset with external storage (a one-dataset file opens as HDF5Image)',
      make: (p) => ({ open: hdf5External(p, 'image.h5', 'plain'), kind: 'raster' }),
      reportedAs: 'HDF5Image',
      missing: () => missingTool('h5cc'),
    },
  ],
  netCDF: [
    {
      field: 'a netCDF-4 (HDF5) variable with external storage',
      make: (p) => ({ open: hdf5External(p, 'image.nc', 'plain'), kind: 'raster' }),
      missing: () => missingTool('h5cc'),
    },
  ],
  BAG: [
    {
      field: 'BAG_root/elevation with HDF5 external storage',
      make: (p) => ({ open: hdf5External(p, 'image.bag', 'bag'), kind: 'raster' }),
      missing: () => missingTool('h5cc'),
    },
  ],
  HDF4: [
    {
      field: 'an SDS stored in an external element (a one-SDS file opens as HDF4Image)',
      make(p) {
        const out = path.join(p.data, 'image.hdf');
        // The HDF4 library opens the external file as it records it: from the data folder.
        run(h4External(), [out, secretText(p)], { cwd: p.data });
        return { open: out, kind: 'raster' };
      },
      reportedAs: 'HDF4Image',
      missing: () => missingTool('gcc', '/usr/include/hdf/mfhdf.h'),
    },
  ],
  RS2: [
    {
      field: 'fullResolutionImageData',
      make(p) {
        const xml = `<?xml version="1.0" encoding="UTF-8"?>
<product xmlns="http://www.rsi.ca/rs2/prod/xml/schemas">
 <sourceAttributes><satellite>RADARSAT-2</satellite><sensor>SAR</sensor><beamModeMnemonic>S1</beamModeMnemonic><rawDataStartTime>2009-03-13T00:00:00Z</rawDataStartTime></sourceAttributes>
 <imageGenerationParameters><generalProcessingInformation><productType>SGF</productType></generalProcessingInformation></imageGenerationParameters>
 <imageAttributes>
  <rasterAttributes><dataType>Magnitude Detected</dataType><bitsPerSample>8</bitsPerSample><numberOfSamplesPerLine>8</numberOfSamplesPerLine><numberOfLines>8</numberOfLines><sampledPixelSpacing>1</sampledPixelSpacing><sampledLineSpacing>1</sampledLineSpacing></rasterAttributes>
  <fullResolutionImageData pole="HH">${secretRaster(p)}</fullResolutionImageData>
 </imageAttributes>
</product>
`;
        return { open: write(path.join(p.data, 'product.xml'), xml), kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  SAFE: [
    {
      field: "a measurement dataObject's fileLocation href",
      make(p) {
        const manifest = `<?xml version="1.0" encoding="UTF-8"?>
<xfdu:XFDU xmlns:xfdu="urn:ccsds:schema:xfdu:1" xmlns:safe="http://www.esa.int/safe/sentinel-1.0" version="esa/safe/sentinel-1.0/sentinel-1/sar/level-1/grd/standard/iwdp">
 <informationPackageMap><xfdu:contentUnit unitType="SAFE Archive Information Package">
  <xfdu:contentUnit unitType="Measurement Data Unit" repID="s1Level1MeasurementSchema" dmdID="productAnnotation calibrationAnnotation"><dataObjectPointer dataObjectID="measurement"/></xfdu:contentUnit>
 </xfdu:contentUnit></informationPackageMap>
 <metadataSection>
  <metadataObject ID="productAnnotation" classification="DESCRIPTION" category="DMD"><dataObjectPointer dataObjectID="product"/></metadataObject>
  <metadataObject ID="calibrationAnnotation" classification="DESCRIPTION" category="DMD"><dataObjectPointer dataObjectID="calibration"/></metadataObject>
 </metadataSection>
 <dataObjectSection>
  <dataObject ID="product" repID="s1Level1ProductSchema"><byteStream mimeType="text/xml"><fileLocation locatorType="URL" href="./annotation/product.xml"/></byteStream></dataObject>
  <dataObject ID="calibration" repID="s1Level1CalibrationSchema"><byteStream mimeType="text/xml"><fileLocation locatorType="URL" href="./annotation/calibration.xml"/></byteStream></dataObject>
  <dataObject ID="measurement" repID="s1Level1MeasurementSchema"><byteStream mimeType="application/octet-stream"><fileLocation locatorType="URL" href="${secretRaster(p)}"/></byteStream></dataObject>
 </dataObjectSection>
</xfdu:XFDU>
`;
        write(
          path.join(p.data, 'annotation', 'product.xml'),
          `<?xml version="1.0" encoding="UTF-8"?>
<product><adsHeader><missionId>S1A</missionId><productType>GRD</productType><polarisation>VV</polarisation><mode>IW</mode><swath>IW</swath></adsHeader>
<imageAnnotation><imageInformation><numberOfSamples>8</numberOfSamples><numberOfLines>8</numberOfLines><outputPixels>16 bit Unsigned Integer</outputPixels></imageInformation></imageAnnotation>
<geolocationGrid><geolocationGridPointList count="4">
<geolocationGridPoint><line>0</line><pixel>0</pixel><latitude>46.08</latitude><longitude>7</longitude><height>0</height></geolocationGridPoint>
<geolocationGridPoint><line>0</line><pixel>7</pixel><latitude>46.08</latitude><longitude>7.08</longitude><height>0</height></geolocationGridPoint>
<geolocationGridPoint><line>7</line><pixel>0</pixel><latitude>46</latitude><longitude>7</longitude><height>0</height></geolocationGridPoint>
<geolocationGridPoint><line>7</line><pixel>7</pixel><latitude>46</latitude><longitude>7.08</longitude><height>0</height></geolocationGridPoint>
</geolocationGridPointList></geolocationGrid></product>
`,
        );
        write(
          path.join(p.data, 'annotation', 'calibration.xml'),
          '<?xml version="1.0" encoding="UTF-8"?>\n<calibration><calibrationVectorList count="0"></calibrationVectorList></calibration>\n',
        );
        return { open: write(path.join(p.data, 'manifest.safe'), manifest), kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  PRF: [
    {
      field: "a part's name (n attribute)",
      make(p) {
        secretRaster(p);
        // GDAL reads part <n> at <folder>/<stem>/<n>.tif: the stem folder must exist for ../ to leave it.
        mkdirSync(path.join(p.data, 'image'), { recursive: true });
        const prf = `<?xml version="1.0" encoding="UTF-8"?>
<phini>
 <ChannelsInfo n="ChannelsInfo"><s n="type" v="U"/><s n="bytes_ps" v="1"/><s n="channels" v="1"/></ChannelsInfo>
 <s n="Width" v="8"/><s n="Height" v="8"/><s n="QChans" v="1"/>
 <Part n="../${ref(p, 'secret')}"><s n="Width" v="8"/><s n="Height" v="8"/><s n="DispX" v="0"/><s n="DispY" v="0"/><s n="Scale" v="0"/></Part>
</phini>
`;
        return { open: write(path.join(p.data, 'image.prf'), prf), kind: 'raster' };
      },
      relativeOnly: "GDAL prefixes the part name with the file's own folder and stem",
    },
  ],
  TSX: [
    {
      field: 'an imageData file location',
      make(p) {
        const target = secretRaster(p);
        const xml = `<level1Product xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
 <productComponents>
  <imageData layerIndex="1"><polLayer>HH</polLayer><file><location><host>.</host><path>${path.dirname(target)}</path><filename>${path.basename(target)}</filename></location></file></imageData>
 </productComponents>
 <productInfo>
  <imageDataInfo><imageDataType>DETECTED</imageDataType><imageRaster><numberOfRows>8</numberOfRows><numberOfColumns>8</numberOfColumns></imageRaster></imageDataInfo>
  <productVariantInfo><productVariant>MGD</productVariant></productVariantInfo>
 </productInfo>
</level1Product>
`;
        return { open: write(path.join(p.data, 'TSX1_SAR__MGD.xml'), xml), kind: 'raster' };
      },
      relativeOnly: joined,
    },
  ],
  SENTINEL2: [
    {
      field: "a granule's IMAGE_FILE (read through the file's own 10 m subdataset in the control)",
      make(p) {
        // The granule: another user's, its tile metadata beside its image folder.
        const granule = path.join(p.outside, 'granule');
        write(
          path.join(granule, 'MTD_TL.xml'),
          `<?xml version="1.0" encoding="UTF-8"?>
<n1:Level-1C_Tile_ID xmlns:n1="https://psd-14.sentinel2.eo.esa.int/PSD/S2_PDI_Level-1C_Tile_Metadata.xsd">
<n1:Geometric_Info><Tile_Geocoding metadataLevel="Brief"><HORIZONTAL_CS_NAME>WGS84 / UTM zone 32N</HORIZONTAL_CS_NAME><HORIZONTAL_CS_CODE>EPSG:32632</HORIZONTAL_CS_CODE>
<Size resolution="10"><NROWS>8</NROWS><NCOLS>8</NCOLS></Size>
<Geoposition resolution="10"><ULX>300000</ULX><ULY>5000080</ULY><XDIM>10</XDIM><YDIM>-10</YDIM></Geoposition>
</Tile_Geocoding></n1:Geometric_Info></n1:Level-1C_Tile_ID>
`,
        );
        mkdirSync(path.join(granule, 'IMG_DATA'), { recursive: true });
        for (const band of ['B02', 'B03', 'B04', 'B08']) secretRaster(p, path.join('granule', 'IMG_DATA', `T_${band}.jp2`));
        const mtd = `<n1:Level-1C_User_Product xmlns:n1="https://psd-14.sentinel2.eo.esa.int/PSD/User_Product_Level-1C.xsd">
<n1:General_Info><Product_Info><PROCESSING_LEVEL>Level-1C</PROCESSING_LEVEL><PRODUCT_TYPE>S2MSI1C</PRODUCT_TYPE>
<Query_Options completeSingleTile="true"><PRODUCT_FORMAT>SAFE_COMPACT</PRODUCT_FORMAT></Query_Options>
<Product_Organisation><Granule_List><Granule granuleIdentifier="G" imageFormat="JPEG2000">
${['B02', 'B03', 'B04', 'B08'].map((b) => `<IMAGE_FILE>${ref(p, `granule/IMG_DATA/T_${b}`)}</IMAGE_FILE>`).join('\n')}
</Granule></Granule_List></Product_Organisation></Product_Info>
<Product_Image_Characteristics><QUANTIFICATION_VALUE unit="none">1000</QUANTIFICATION_VALUE></Product_Image_Characteristics>
</n1:General_Info>
<n1:Geometric_Info><Product_Footprint><Product_Footprint><Global_Footprint><EXT_POS_LIST>46 7 46 7.1 45.9 7.1 45.9 7 46 7</EXT_POS_LIST></Global_Footprint></Product_Footprint></Product_Footprint>
<Coordinate_Reference_System><GEO_TABLES version="1">EPSG</GEO_TABLES><HORIZONTAL_CS_TYPE>GEOGRAPHIC</HORIZONTAL_CS_TYPE></Coordinate_Reference_System></n1:Geometric_Info>
</n1:Level-1C_User_Product>
`;
        const file = write(path.join(p.data, 'MTD_MSIL1C.xml'), mtd);
        // The file itself lists subdatasets (which the service does not open); GDAL reads the
        // images through them.
        return { open: file, kind: 'raster', controlPath: `SENTINEL2_L1C:${file}:10m:EPSG_32632` };
      },
      relativeOnly: joined,
    },
  ],
  Rasterlite: [
    {
      field: 'its tile table as a view of a SpatiaLite VirtualText table (another upload, an ASCII grid, as the tile)',
      make(p) {
        // The tile: another user's ASCII grid of the canary's pixels, read line by line and put back together.
        const grid = path.join(p.outside, 'secret.asc');
        run('gdal_translate', ['-q', '-of', 'AAIGrid', path.resolve(p.data, secretRaster(p)), grid]);
        writeFileSync(grid, `${readFileSync(grid, 'latin1')}\n\n`);
        mkdirSync(p.data, { recursive: true });
        const db = path.join(p.data, 'tiles.sqlite');
        run('gdal_translate', ['-q', '-of', 'Rasterlite', baseRaster(p), `RASTERLITE:${db},table=t`]);
        runSql(
          p,
          db,
          [
            'DROP TABLE t_rasters',
            `CREATE VIRTUAL TABLE canary USING VirtualText('${ref(p, 'secret.asc')}', 'UTF-8', 0, POINT, NONE, '|')`,
            'CREATE VIEW t_rasters AS SELECT CAST(group_concat(COL001, char(10)) AS BLOB) AS raster, 1 AS id FROM canary',
          ],
          'Rasterlite',
        );
        return { open: db, kind: 'raster' };
      },
    },
  ],
  Idrisi: [
    {
      field: "the .vdc's ref. system (a .ref file)",
      make(p) {
        idrisiRef(p);
        // A point file: type 1, one feature, a 0x105-byte header, then id, x and y as doubles.
        const vct = Buffer.alloc(0x105 + 24);
        vct.writeUInt8(1, 0);
        vct.writeInt32LE(1, 1);
        vct.writeDoubleLE(1, 0x105);
        vct.writeDoubleLE(500000, 0x105 + 8);
        vct.writeDoubleLE(5100000, 0x105 + 16);
        write(path.join(p.data, 'points.vct'), vct);
        write(
          path.join(p.data, 'points.vdc'),
          [
            'file format : IDRISI Vector A.1',
            'file title  : points',
            'id type     : integer',
            'file type   : binary',
            'object type : point',
            `ref. system : ${ref(p, 'secret')}`,
            'ref. units  : m',
            'unit dist.  : 1.0000000',
            'min. X      : 500000',
            'max. X      : 500000',
            'min. Y      : 5100000',
            'max. Y      : 5100000',
            "pos'n error : unknown",
            'resolution  : unknown',
            '',
          ].join('\n'),
        );
        return { open: path.join(p.data, 'points.vct'), kind: 'vector' };
      },
      relativeOnly: joined,
    },
  ],
  EDIGEO: [
    {
      field: "the .THF's lot name (LONSA), prefix of every other file of the lot",
      make(p) {
        // The lot: another user's, whose one attribute is named after the canary.
        const lot = (file: string, lines: [string, string][]) => write(path.join(p.outside, file), edigeo(lines));
        lot('LG.GEO', [
          ['RTYSA', 'GEO'],
          ['RIDSA', 'GEO1'],
          ['RELSA', 'LAMB93'],
        ]);
        lot('LD.DIC', [
          ['RTYSA', 'DID'],
          ['RIDSA', 'O1'],
          ['LABSA', 'OBJ'],
          ['RTYSA', 'DIA'],
          ['RIDSA', 'A1'],
          ['LABSA', p.canary.text],
          ['TYPSA', 'A'],
        ]);
        lot('LS.SCD', [
          ['RTYSA', 'OBJ'],
          ['RIDSA', 'OBJ1'],
          ['DIPCP', 'EDICO;SeTD;DID;O1'],
          ['KNDSA', 'PCT'],
          ['AAPCP', 'EDICO;SeTD;ATT;ATT1'],
          ['RTYSA', 'ATT'],
          ['RIDSA', 'ATT1'],
          ['DIPCP', 'EDICO;SeTD;DIA;A1'],
          ['CANSN', '64'],
        ]);
        lot('LV.VEC', [
          ['RTYSA', 'PNO'],
          ['RIDSA', 'P1'],
          ['CORCC', '700000;6600000'],
          ['RTYSA', 'FEA'],
          ['RIDSA', 'F1'],
          ['SCPCP', 'EDICO;SeTD;OBJ;OBJ1'],
          ['ATPCP', 'EDICO;SeTD;ATT;ATT1'],
          ['ATVSA', 'x'],
          ['RTYSA', 'LNK'],
          ['RIDSA', 'L1'],
          ['FTPCP', 'EDICO;SeTD;FEA;F1'],
          ['FTPCP', 'EDICO;SeTD;PNO;P1'],
        ]);
        const thf = edigeo([
          ['RTYSA', 'GTS'],
          ['RIDSA', 'LOT1'],
          ['LONSA', ref(p, 'L')],
          ['GONSA', 'G'],
          ['DINSA', 'D'],
          ['SCNSA', 'S'],
          ['GDNSA', 'V'],
        ]);
        return { open: write(path.join(p.data, 'lot.THF'), thf), kind: 'vector' };
      },
      relativeOnly: joined,
    },
  ],
  ADRG: [
    {
      field: "the .GEN's BAD field (its image file)",
      make(p) {
        // The image: another user's ADRG .IMG holding the canary's pixels in its first tile.
        const utm = path.join(p.work, 'canary-utm.tif');
        run('gdal_translate', ['-q', '-a_srs', 'EPSG:32632', '-a_ullr', '300000', '5000080', '300080', '5000000', path.resolve(p.data, secretRaster(p)), utm]);
        const canaryDir = path.join(p.work, 'canary-adrg');
        mkdirSync(canaryDir, { recursive: true });
        run('gdal_translate', ['-q', '-of', 'ADRG', '-b', '1', '-b', '1', '-b', '1', utm, path.join(canaryDir, 'CANARY01.GEN')]);
        // ADRG names the image with 12 characters in an ISO 8211 record: the reference replaces them in place.
        const target = ref(p, 'X');
        if (target.length !== 'ABCDEF01.IMG'.length) throw new Error('the reference must have 12 characters');
        writeFileSync(path.join(p.outside, 'X'), readFileSync(path.join(canaryDir, 'CANARY01.IMG')));
        const ones = path.join(p.work, 'ones.tif');
        run('gdal_create', [
          '-q',
          '-of',
          'GTiff',
          '-outsize',
          '8',
          '8',
          '-bands',
          '3',
          '-ot',
          'Byte',
          '-burn',
          '1',
          '-a_srs',
          'EPSG:4326',
          '-a_ullr',
          '7',
          '46.08',
          '7.08',
          '46',
          ones,
        ]);
        mkdirSync(p.data, { recursive: true });
        const gen = path.join(p.data, 'ABCDEF01.GEN');
        run('gdal_translate', ['-q', '-of', 'ADRG', ones, gen]);
        edit(gen, (s) => s.replaceAll('ABCDEF01.IMG', target));
        rmSync(path.join(p.data, 'ABCDEF01.IMG'));
        return { open: gen, kind: 'raster' };
      },
      relativeOnly: `${joined}; the name has 12 characters`,
    },
  ],
  ECRGTOC: [
    {
      field: 'a frame_path and name',
      make(p) {
        // The frame: another user's raster (any format GDAL opens; a GeoTIFF here) georeferenced
        // where ECRG puts frame 000000009s0013 of zone 2 at 1:500 000, the canary's pixels in its corner.
        const name = '000000009s0013.lf2';
        const gt = ecrgFrameGeoTransform(name, 500_000, 2);
        const frame = path.join(p.outside, name);
        const source = path.resolve(p.data, secretRaster(p));
        // One 2304-pixel frame: the 8×8 canary in its corner, zeros around it (a window past the source's edge).
        run('gdal_translate', [
          '-q',
          '-of',
          'GTiff',
          '-co',
          'COMPRESS=DEFLATE',
          '-b',
          '1',
          '-b',
          '1',
          '-b',
          '1',
          '-srcwin',
          '0',
          '0',
          '2304',
          '2304',
          '-a_nodata',
          'none',
          '-a_srs',
          'EPSG:4326',
          '-a_ullr',
          String(gt[0]),
          String(gt[3]),
          String(gt[0]! + gt[1]! * 2304),
          String(gt[3]! + gt[5]! * 2304),
          source,
          frame,
        ]);
        const toc = `<?xml version="1.0"?>
<Table_of_Contents>
  <file_header file_status="new"><file_name>TOC.xml</file_name></file_header>
  <product product_title="ProductTitle">
    <disc id="DiscId">
      <frame_list number_of_frames="1">
        <scale size="1:500 K">
          <frame name="${name}"><frame_path>${p.how === 'relative' ? `../${path.basename(p.outside)}` : p.outside}</frame_path><frame_version>001</frame_version><frame_chart_type>lf</frame_chart_type><frame_zone>2</frame_zone></frame>
        </scale>
      </frame_list>
    </disc>
  </product>
</Table_of_Contents>
`;
        return { open: write(path.join(p.data, 'TOC.xml'), toc), kind: 'raster', controlArgs: ['-srcwin', '0', '0', '8', '8'] };
      },
    },
  ],
};

/**
 * Drivers whose files do name other files, but for which no dataset is crafted here yet (each
 * says why): the walk lists them as to-do, so they are seen, not forgotten. In the service they
 * are read in a sandboxed host like every driver outside IN_PROCESS_DRIVERS.
 */
export const uncrafted: Record<string, string> = {
  CAD: 'a DWG IMAGEDEF names a raster file, opened with GDALOpen (gdalcaddataset.cpp); no DWG writer exists on this machine',
  RPFTOC: "an A.TOC's frame file index names CADRG frame files; writing one needs an RPF table of contents and CADRG frames (binary, no writer here)",
  SRP: "a .THF's FDR NAM names (by its first 6 characters, so ../abc works) the folder whose .GEN GDAL reads; no ASRP/USRP writer here, and their ISO 8211 records would have to be written by hand",
  SDTS: 'a CATD module names every other module file (CPLFormCIFilename); SDTS transfers are ISO 8211 modules with no writer here',
  OGR_SDTS: 'a CATD module names every other module file (CPLFormCIFilename); SDTS transfers are ISO 8211 modules with no writer here',
  AVCBin: 'an INFO table marked external stores the path of its data file in its arcNNNN.dat (AVC library); coverages are binary with no writer here',
  AIG: 'the raster attribute table is read from ../info through the AVC library, whose external tables store a data file path; no coverage writer here',
};

/** Why each other upload driver's files cannot name a file elsewhere. */
const single = 'one self-contained file; companions (.aux.xml, .ovr, world file, .prj) are found by its own name';
export const noReferenceField: Record<string, string> = {
  // Opened only through a prefix that uploads never carry (GDAL gets a file path; ':' never survives a file name).
  DERIVED: 'opens only DERIVED_SUBDATASET:<function>:<dataset> names, which uploads never pass',
  MEM: 'opens only MEM::: strings, which uploads never pass',
  PLMOSAIC: 'opens only PLMOSAIC: names (a web service), which uploads never pass',
  OGR_OGDI: 'opens only gltp: URLs, which uploads never pass',
  HDF4Image:
    'opens only HDF4_SDS:/HDF4_GR:/HDF4_EOS: subdataset names, which uploads never pass (the HDF4 driver hands a one-SDS file to it: crafted under HDF4)',
  HDF5Image: 'opens only HDF5:"file":path subdataset names, which uploads never pass (the HDF5 driver hands a one-dataset file to it: crafted under HDF5)',
  Memory: 'holds datasets in memory; it opens no file',
  GPSBabel: 'runs the gpsbabel program on the file itself or on a GPSBABEL: name; no field names another file',
  // The in-process drivers (IN_PROCESS_DRIVERS): their references were measured here too.
  'ESRI Shapefile': 'companions (.shx, .dbf, .prj, .cpg, .qix) by its own name; the .prj is read as ESRI WKT, never as a file name (measured)',
  CSV: '.csvt and .prj by its own name; the .prj text is parsed with file access off (measured)',
  GeoJSON: 'a crs name is parsed with file access off, a crs link needs http and GDAL has no network (measured)',
  GeoJSONSeq: 'one feature per line, no crs member',
  OpenFileGDB: "a .gdb folder's own .gdbtable/.gdbtablx files by fixed names",
  FlatGeobuf: 'one file (its spatial index inside); the CRS is an authority code or WKT',
  // Self-contained rasters.
  GTiff: `${single}; a PAM .aux.xml SRS is parsed with file access off (measured)`,
  NITF: `${single}; image, graphic, text and DES segments live inside the file`,
  CEOS: single,
  GFF: single,
  ELAS: single,
  AAIGrid: single,
  GRASSASCIIGrid: single,
  ISG: single,
  DTED: single,
  PNG: single,
  JPEG: single,
  JDEM: single,
  GIF: single,
  BIGGIF: single,
  ESAT: single,
  FITS: `${single}; header keywords hold values, not file names`,
  BSB: single,
  XPM: single,
  BMP: single,
  AirSAR: single,
  PCRaster: single,
  SGI: single,
  SRTMHGT: single,
  Leveller: single,
  Terragen: single,
  VICAR: 'labels and data in the one file (a PDS3-wrapped VICAR header is found inside the same file)',
  JP2OpenJPEG: `${single}; GMLJP2 xlink:href is followed only to gmljp2://xml/ boxes inside the file (remote ones need an open option and a network)`,
  L1B: single,
  FIT: single,
  GRIB: single,
  RMF: single,
  MSGN: single,
  GSAG: single,
  GSBG: single,
  GS7BG: single,
  COSAR: single,
  R: single,
  WEBP: single,
  PDF: `${single}; poppler reads every stream from the file itself`,
  CALS: single,
  PNM: single,
  DOQ1: single,
  DOQ2: single,
  GSC: single,
  BT: single,
  LAN: single,
  DIPEx: single,
  LCP: single,
  GTX: single,
  LOSLAS: single,
  NTv2: single,
  CTable2: single,
  ACE2: single,
  KRO: single,
  BYN: single,
  RIK: single,
  USGSDEM: single,
  GXF: single,
  BLX: single,
  XYZ: single,
  HF2: single,
  OZI: single,
  CTG: single,
  ZMap: single,
  NGSGEOID: single,
  IRIS: single,
  SIGDEM: single,
  HEIF: single,
  TGA: single,
  // Companions found by the opened file's own name, in its own folder.
  SAR_CEOS: "leader, data and trailer files found by naming conventions from the opened file's own name",
  JAXAPALSAR: "IMG-, LED- and TRL- files found by the opened file's own name",
  MFF: 'the .hdr names no file; band files (.b0, .i0 …) are found by its own name',
  MFF2: 'a folder with attrib and image_data files by fixed names',
  CPG: "the polarimetric channel files are found by the opened file's own name",
  COASP: 'the .hdr names no file; the hh/hv/vh/vv data files are found by its own name',
  ROI_PAC: 'the .rsc is found by its own name and names no file',
  RRASTER: 'the .grd header names no file; the .gri is found by its own name',
  ARG: 'the .json is found by its own name and holds values only',
  NWT_GRD: 'the grid itself; a .tab companion by its own name',
  NWT_GRC: 'the grid itself; a .tab companion by its own name',
  SAGA: 'the .sgrd header is found by its own name and names no file',
  Zarr: 'a folder of .zarray/.zattrs and chunk files found by their keys; no metadata names a file',
  GenBin: 'the .hdr is found by its own name and names no file',
  ENVI: "the .hdr is found by the data file's own name and names no file",
  EHdr: ".hdr, .clr, .stx and .prj are found by the data file's own name and name no file",
  ISCE: 'the .xml is found by its own name; its FILE_NAME property is not used (measured)',
  // Self-contained vector formats.
  'UK .NTF': 'one transfer file (or a folder of them); no field names another file',
  LVBAG: 'XML records in the file itself',
  S57: 'the cell itself; updates (.001, .002 …) are found by its own name',
  DGN: 'the file itself; reference file attachments are not followed',
  NAS: 'ALKIS XML in the file itself; GDAL resolves no xlink:href and reads no schema',
  GPX: 'the file itself',
  LIBKML: 'NetworkLink hrefs and external styleUrls are kept as values, never read (measured)',
  KML: 'the file itself; NetworkLinks are not followed (measured)',
  ESRIJSON: 'the file itself; a spatialReference wkt is parsed as WKT',
  TopoJSON: 'the file itself',
  'Interlis 1': 'a transfer file names models by name only; a model file is taken only after a comma in the opened name or from the MODEL open option',
  'Interlis 2': 'a transfer file names models by name only; a model file is taken only after a comma in the opened name or from the MODEL open option',
  OGR_GMT: 'the file itself',
  WAsP: 'the file itself',
  DXF: 'the file itself; xrefs are not loaded',
  Geoconcept: 'the file itself; a .gct configuration only through an open option',
  GeoRSS: 'the file itself',
  VFK: 'the file itself (GDAL caches it in a SQLite file by its own name)',
  OSM: "the file itself; its osmconf.ini comes from GDAL's data folder or a config option",
  SOSI: 'the file itself',
  SVG: 'the file itself',
  XLS: 'the workbook itself',
  ODS: "the document's own content.xml; external links are not followed",
  XLSX: "the workbook's own ZIP entries; external links are not followed",
  SXF: 'the file itself; the .rsc classifier is found by its own name or a config option',
  Selafin: 'the file itself',
  JML: 'the file itself',
  VDV: 'the file itself, or a folder of .x10 files',
  MVT: 'a tile, or a folder of tiles with metadata.json by a fixed name',
  MapML: 'the file itself; link hrefs are not followed',
  TIGER: 'a folder of TIGER/Line record files by fixed names',
  AVCE00: 'the file itself',
};

// ---- reading the canary ---------------------------------------------------------------------

/**
 * Whether a text shows the canary: its random part as text, or its first 24 bytes as a run of
 * numbers (a raster that read the file as pixels, printed as an ASCII grid, JSON or metadata).
 */
export function shows(text: string, canary: Canary, pixels?: Fixture['pixels']): boolean {
  const hex = canary.text.slice(6);
  if (text.includes(hex) || text.includes(Buffer.from(hex).toString('hex').slice(0, 40))) return true;
  // Base64 of the bytes (a binary field written as text), whatever byte the encoding started at.
  for (let start = 0; start < 3; start++) {
    if (text.includes(Buffer.from(canary.text.slice(start)).toString('base64').slice(4, 44))) return true;
  }
  // Rows of a raster 8 pixels wide may come out in either vertical order: look for its rows.
  const values = pixelValues(canary.bytes, pixels);
  const numbers = (text.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
  const rows = Math.floor(values.length / 8);
  let found = 0;
  for (let r = 0; r < rows; r++) if (containsRun(numbers, values.slice(r * 8, r * 8 + 8))) found += 1;
  return found >= Math.min(3, rows);
}

/** The pixel values a raster reading these bytes has. */
export function pixelValues(bytes: Buffer, pixels?: Fixture['pixels']): number[] {
  if (pixels === 'int16be') return Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16BE(i * 2));
  return [...bytes];
}

function containsRun(haystack: number[], run: number[]): boolean {
  outer: for (let i = 0; i + run.length <= haystack.length; i++) {
    for (let j = 0; j < run.length; j++) if (haystack[i + j] !== run[j]) continue outer;
    return true;
  }
  return false;
}

export interface ControlResult {
  /** The driver plain GDAL opened the dataset with. */
  driver: string | null;
  /** Everything GDAL printed, and for a raster its first band as an ASCII grid. */
  output: string;
}

const execFileAsync = promisify(execFile);

/**
 * Plain GDAL on this machine, outside any sandbox, with every driver: what the service would do
 * if it opened uploads in its own process. ogrinfo for vectors; gdalinfo and gdal_translate to an
 * ASCII grid for rasters. Asynchronous, so that the spec asks the service meanwhile.
 */
export async function control(fixture: Fixture, scratch: string, env: NodeJS.ProcessEnv = process.env): Promise<ControlResult> {
  const target = fixture.controlPath ?? fixture.open;
  const cwd = path.dirname(fixture.open);
  const capture = async (cmd: string, args: string[]) => {
    try {
      const { stdout, stderr } = await execFileAsync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      return `${stdout}\n${stderr}`;
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      return `${e.stdout ?? ''}\n${e.stderr ?? e.message}`;
    }
  };
  if (fixture.kind === 'vector') {
    let output = await capture('ogrinfo', ['-ro', '-al', target]);
    if (fixture.layers) output += `\n${await capture('ogrinfo', ['-ro', target, ...fixture.layers])}`;
    return { driver: /using driver `([^']+)'/.exec(output)?.[1] ?? null, output };
  }
  const info = await capture('gdalinfo', [target]);
  mkdirSync(scratch, { recursive: true });
  const grid = path.join(scratch, 'control.asc');
  const translate = await capture('gdal_translate', ['-q', '-of', 'AAIGrid', '-b', '1', ...(fixture.controlArgs ?? []), target, grid]);
  let pixels = '';
  try {
    pixels = readFileSync(grid, 'latin1');
  } catch {
    // nothing written: the output says why
  }
  return { driver: /^Driver: ([^/]+)\//m.exec(info)?.[1] ?? null, output: `${info}\n${translate}\n${pixels}` };
}
