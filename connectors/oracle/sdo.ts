import { ConnectorError } from '../../domain/transfers.js';

/*
 * ISO / OGC WKB → Oracle's SDO_GEOMETRY (its attributes as node-oracledb binds them), written from
 * Oracle Spatial's documented object model: SDO_GTYPE = dimensions·1000 + measure position·100 +
 * type (01 point … 07 multipolygon, 04 collection); SDO_ELEM_INFO triplets (offset into the
 * ordinates from 1, element type, interpretation): 1/1 points (n for a point cluster), 2/1 lines of
 * straight segments, 1003/1 exterior and 2003/1 interior polygon rings. Oracle wants exterior rings
 * counter-clockwise and interior rings clockwise, so rings drawn otherwise (as shapefiles draw
 * them) are reversed here. Points are kept in SDO_ORDINATES (not SDO_POINT), which Oracle accepts
 * for every dimension and measure. Curves and surfaces other than polygons are refused.
 */

export interface SdoGeometry {
  SDO_GTYPE: number;
  SDO_SRID: number | null;
  SDO_POINT: null;
  SDO_ELEM_INFO: number[];
  SDO_ORDINATES: number[];
}

interface Reader {
  buf: Buffer;
  pos: number;
}

const u32 = (r: Reader, le: boolean) => {
  const v = le ? r.buf.readUInt32LE(r.pos) : r.buf.readUInt32BE(r.pos);
  r.pos += 4;
  return v;
};
const f64 = (r: Reader, le: boolean) => {
  const v = le ? r.buf.readDoubleLE(r.pos) : r.buf.readDoubleBE(r.pos);
  r.pos += 8;
  return v;
};

interface Parsed {
  type: number;
  z: boolean;
  m: boolean;
  /** Points: one coordinate; lines: one ring; polygons: rings; collections: members. */
  coords?: number[][];
  rings?: number[][][];
  members?: Parsed[];
}

function parse(r: Reader): Parsed {
  if (r.pos + 5 > r.buf.length) throw invalid('the WKB ends too early');
  const le = r.buf[r.pos++] === 1;
  const raw = u32(r, le);
  const z = (raw & 0x80000000) !== 0 || [1, 3].includes(Math.floor((raw & 0xffff) / 1000));
  const m = (raw & 0x40000000) !== 0 || [2, 3].includes(Math.floor((raw & 0xffff) / 1000));
  const type = (raw & 0xffff) % 1000;
  if (raw & 0x20000000) r.pos += 4; // EWKB SRID
  const dims = 2 + (z ? 1 : 0) + (m ? 1 : 0);
  const point = () => Array.from({ length: dims }, () => f64(r, le));
  const points = () => Array.from({ length: u32(r, le) }, point);
  switch (type) {
    case 1:
      return { type, z, m, coords: [point()] };
    case 2:
      return { type, z, m, coords: points() };
    case 3:
      return { type, z, m, rings: Array.from({ length: u32(r, le) }, points) };
    case 4:
    case 5:
    case 6:
    case 7:
      return { type, z, m, members: Array.from({ length: u32(r, le) }, () => parse(r)) };
    default:
      throw invalid(`WKB geometry type ${type} (curves, surfaces) has no SDO_GEOMETRY form here; convert to lines or polygons first`);
  }
}

const invalid = (why: string) => new ConnectorError('invalid_data', `A geometry cannot be written to Oracle: ${why}`, {}, false);

/** Twice the signed area of a ring (x, y): positive when counter-clockwise. */
export function signedArea(ring: number[][]): number {
  let sum = 0;
  for (let i = 0; i + 1 < ring.length; i++) sum += ring[i]![0]! * ring[i + 1]![1]! - ring[i + 1]![0]! * ring[i]![1]!;
  return sum;
}

const isEmpty = (g: Parsed): boolean =>
  g.coords ? g.coords.length === 0 || (g.type === 1 && g.coords[0]!.every((v) => Number.isNaN(v))) : g.rings ? g.rings.length === 0 : g.members!.every(isEmpty);

class Builder {
  elemInfo: number[] = [];
  ordinates: number[] = [];
  constructor(readonly dims: number) {}
  private push(coords: number[][]) {
    for (const c of coords) this.ordinates.push(...c.slice(0, this.dims));
  }
  add(g: Parsed): void {
    if (isEmpty(g)) return;
    switch (g.type) {
      case 1:
        this.elemInfo.push(this.ordinates.length + 1, 1, 1);
        this.push(g.coords!);
        return;
      case 2:
        this.elemInfo.push(this.ordinates.length + 1, 2, 1);
        this.push(g.coords!);
        return;
      case 3:
        g.rings!.forEach((ring, i) => {
          if (ring.length === 0) return;
          const ccw = signedArea(ring) > 0;
          // Exterior rings counter-clockwise, interior rings clockwise.
          const oriented = (i === 0) === ccw ? ring : [...ring].reverse();
          this.elemInfo.push(this.ordinates.length + 1, i === 0 ? 1003 : 2003, 1);
          this.push(oriented);
        });
        return;
      case 4: {
        // A multipoint as one point cluster.
        const pts = g.members!.filter((p) => !isEmpty(p)).map((p) => p.coords![0]!);
        this.elemInfo.push(this.ordinates.length + 1, 1, pts.length);
        this.push(pts);
        return;
      }
      default:
        for (const member of g.members!) this.add(member);
    }
  }
}

/** SDO_GTYPE's last two digits for a WKB type. */
const sdoType: Record<number, number> = { 1: 1, 2: 2, 3: 3, 4: 5, 5: 6, 6: 7, 7: 4 };

/** The SDO_GEOMETRY of a WKB value, with an SRID; null for an empty geometry. */
export function wkbToSdo(wkb: Buffer, srid: number | null): SdoGeometry | null {
  const g = parse({ buf: wkb, pos: 0 });
  if (isEmpty(g)) return null;
  const dims = 2 + (g.z ? 1 : 0) + (g.m ? 1 : 0);
  const builder = new Builder(dims);
  builder.add(g);
  // The measure is the last ordinate of each point when there is one.
  const gtype = dims * 1000 + (g.m ? dims * 100 : 0) + sdoType[g.type]!;
  return { SDO_GTYPE: gtype, SDO_SRID: srid, SDO_POINT: null, SDO_ELEM_INFO: builder.elemInfo, SDO_ORDINATES: builder.ordinates };
}

/** Oracle's own SRIDs of the commonest geodetic systems, as EPSG codes (others are EPSG codes already). */
export const epsgOfOracleSrid = (srid: number): number => ({ 8307: 4326, 8265: 4269, 8267: 4267, 8292: 4283 })[srid] ?? srid;
