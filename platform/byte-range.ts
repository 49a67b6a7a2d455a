/*
 * HTTP byte ranges (RFC 9110 §14) for downloads that clients read in parts: a PMTiles viewer
 * reads a remote archive's header, directories and tiles by ranges, and interrupted downloads
 * resume. One range per request; a header this module does not understand (several ranges,
 * another unit, bad syntax) is ignored, as the RFC allows, and the whole file is sent.
 */

/** A range as asked: from a position (to an end, or to the end of the file), or the last N bytes. */
export type ByteRange = { start: number; end?: number } | { suffix: number };

/** Inclusive byte positions within a file. */
export interface ResolvedRange {
  start: number;
  end: number;
}

/** The one range a Range header asks for, or undefined when it should be ignored. */
export function parseRange(header: string | undefined): ByteRange | undefined {
  if (!header) return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') return { suffix: Number(m[2]) };
  const start = Number(m[1]);
  if (m[2] === '') return { start };
  const end = Number(m[2]);
  if (end < start) return undefined; // syntactically invalid: ignored (RFC 9110 §14.1.1)
  return { start, end };
}

/** The range's positions in a file of `size` bytes, or null when it cannot be satisfied (416). */
export function resolveRange(range: ByteRange, size: number): ResolvedRange | null {
  if ('suffix' in range) {
    if (range.suffix === 0 || size === 0) return null;
    return { start: Math.max(0, size - range.suffix), end: size - 1 };
  }
  if (range.start >= size) return null;
  return { start: range.start, end: Math.min(range.end ?? size - 1, size - 1) };
}

/** The Range header value S3 and other HTTP stores understand for a range. */
export function rangeHeader(range: ByteRange): string {
  return 'suffix' in range ? `bytes=-${range.suffix}` : `bytes=${range.start}-${range.end ?? ''}`;
}

/** A range asked of a file it does not fit (the answer is 416 with `Content-Range: bytes *\/size`). */
export class RangeNotSatisfiable extends Error {
  constructor(readonly size: number) {
    super(`The requested range is beyond the file's ${size} bytes`);
  }
}
