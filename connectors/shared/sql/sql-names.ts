/*
 * Column names a target database can hold, for the SQL Destinations that create their own tables
 * (SQL Server, Oracle). Every name is quoted when used, so reserved words (ORDER, DATE, LEVEL …)
 * and spaces are kept as they are; what a database cannot hold is its length, and for Oracle the
 * case of a plain name (an unquoted `name` means `NAME` there, so plain names are upper-cased for
 * users to query them without quotes). Truncated or colliding names get `_2`, `_3` …, compared
 * without case as both databases do by default.
 */

export interface NamingRules {
  /** Longest name in UTF-8 bytes (Oracle: 128) or characters (SQL Server: 128). */
  maxLength: number;
  unit: 'bytes' | 'chars';
  /** Oracle: plain names ([A-Za-z][A-Za-z0-9_$#]*) upper-cased. */
  upperCasePlain?: boolean;
}

const lengthOf = (name: string, unit: NamingRules['unit']) => (unit === 'bytes' ? Buffer.byteLength(name) : [...name].length);

/** The name cut to the limit on a character boundary. */
export function truncateName(name: string, rules: Pick<NamingRules, 'maxLength' | 'unit'>): string {
  let chars = [...name];
  while (chars.length && lengthOf(chars.join(''), rules.unit) > rules.maxLength) chars = chars.slice(0, -1);
  return chars.join('');
}

const plain = /^[A-Za-z][A-Za-z0-9_$#]*$/;

/**
 * Target names for `names`, in order, none equal (without case) to another or to `taken` (the
 * names the loader adds itself: the key and the geometry column).
 */
export function mapColumnNames(names: string[], rules: NamingRules, taken: string[] = []): string[] {
  const used = new Set(taken.map((t) => t.toLowerCase()));
  return names.map((original) => {
    const base = truncateName(rules.upperCasePlain && plain.test(original) ? original.toUpperCase() : original, rules) || 'column';
    let candidate = base;
    for (let n = 2; used.has(candidate.toLowerCase()); n++) {
      const suffix = `_${n}`;
      candidate = truncateName(base, { ...rules, maxLength: rules.maxLength - lengthOf(suffix, rules.unit) }) + suffix;
    }
    used.add(candidate.toLowerCase());
    return candidate;
  });
}
