import net from 'node:net';

/*
 * IP addresses and CIDR ranges as numbers, for the outbound policy's rules (./rules.ts): parsing
 * both families (an IPv4-mapped IPv6 address counts as its IPv4 address) and testing membership.
 */

export type Family = 4 | 6;

export interface Range {
  family: Family;
  /** The address as a number (IPv4: 32 bits, IPv6: 128 bits). */
  bits: bigint;
  prefix: number;
}

function parseV4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((n, p) => (n << 8n) | BigInt(Number(p)), 0n);
}

function parseV6(text: string): bigint | null {
  if (net.isIPv6(text) === false) return null;
  let s = text.replace(/%.*$/, '');
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const n = parseV4(v4[1]!);
    if (n === null) return null;
    s = `${s.slice(0, -v4[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) return null;
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** An IP address as family and number; IPv4-mapped IPv6 (::ffff:a.b.c.d) counts as the IPv4 address. */
export function parseAddress(text: string): { family: Family; bits: bigint } | null {
  const bare = text.replace(/^\[|\]$/g, '');
  if (net.isIPv4(bare)) return { family: 4, bits: parseV4(bare)! };
  const v6 = parseV6(bare);
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn) return { family: 4, bits: v6 & 0xffffffffn };
  return { family: 6, bits: v6 };
}

export function inRange(range: Range, address: { family: Family; bits: bigint }): boolean {
  if (range.family !== address.family) return false;
  const width = range.family === 4 ? 32 : 128;
  const shift = BigInt(width - range.prefix);
  return range.bits >> shift === address.bits >> shift;
}

/** A CIDR range or a single address (`10.0.0.0/8`, `192.0.2.7`, `fd00::/8`); throws a sentence when it is neither. */
export function range(text: string): Range {
  const [addr, prefixText] = text.split('/') as [string, string | undefined];
  const parsed = parseAddress(addr);
  if (!parsed) throw new Error(`"${text}" is not an IP address or CIDR range`);
  const width = parsed.family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? width : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > width) throw new Error(`"${text}" has an invalid prefix length`);
  return { ...parsed, prefix };
}
