import { DomainError } from '../../domain/errors.js';

/*
 * User SQL (the Workspace `sql`, and the expressions of filter / compute_column) is checked on
 * tokens, not on raw text: strings, quoted identifiers and comments are recognised first, so
 * `'ATTACH'` in a string is fine and `/* *\/ATTACH` in a comment trick is not. What runs is rebuilt
 * from the checked tokens (comments dropped), so the check and the execution see the same thing.
 * The SQL then runs in GDAL's SQLite dialect inside the sandbox (geo/sandbox/sandbox.ts): these checks
 * are the first wall, not the only one.
 */

export type TokenKind = 'word' | 'quoted' | 'string' | 'blob' | 'number' | 'op' | 'punct';

export interface Token {
  kind: TokenKind;
  /** Source text of the token (with quotes for strings and quoted identifiers). */
  text: string;
  /** Unquoted value for strings and quoted identifiers; upper-cased word for words. */
  value: string;
}

const refuse = (message: string, details: Record<string, unknown> = {}) => new DomainError('invalid_transformation', message, details);

const multiCharOps = ['->>', '||', '<=', '>=', '==', '!=', '<>', '<<', '>>', '->'];

/** Splits SQLite SQL into tokens, dropping whitespace and comments. */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = sql.length;
  const isWordStart = (c: string) => /[A-Za-z_]/.test(c) || c.charCodeAt(0) > 127;
  const isWordChar = (c: string) => /[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) > 127;
  while (i < n) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) throw refuse('The SQL has an unterminated /* comment');
      i = end + 2;
      continue;
    }
    if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      let value = '';
      for (;;) {
        if (j >= n) throw refuse(`The SQL has an unterminated ${c === "'" ? 'string' : 'quoted name'}`);
        if (sql[j] === close) {
          if (close !== ']' && sql[j + 1] === close) {
            value += close;
            j += 2;
            continue;
          }
          break;
        }
        value += sql[j];
        j++;
      }
      const text = sql.slice(i, j + 1);
      const prev = tokens[tokens.length - 1];
      // X'0102' is one blob literal
      if (c === "'" && prev && prev.kind === 'word' && prev.value === 'X' && prev.text.length === 1 && sql[i - 1] !== ' ') {
        tokens.pop();
        tokens.push({ kind: 'blob', text: prev.text + text, value });
      } else tokens.push({ kind: c === "'" ? 'string' : 'quoted', text, value });
      i = j + 1;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      const m = /^(0[xX][0-9A-Fa-f]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)/.exec(sql.slice(i));
      const text = m![0];
      tokens.push({ kind: 'number', text, value: text });
      i += text.length;
      continue;
    }
    if (isWordStart(c)) {
      let j = i + 1;
      while (j < n && isWordChar(sql[j]!)) j++;
      const text = sql.slice(i, j);
      tokens.push({ kind: 'word', text, value: text.toUpperCase() });
      i = j;
      continue;
    }
    if (c === '?' || c === ':' || c === '@' || c === '$') {
      throw refuse('The SQL uses a bound parameter (?, :name, @name, $name); write the value in the query instead');
    }
    if ('(),;.'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, value: c });
      i++;
      continue;
    }
    const op = multiCharOps.find((o) => sql.startsWith(o, i)) ?? c;
    if (!/^[-+*/%<>=!|&~]+$/.test(op)) throw refuse(`The SQL has an unexpected character ${JSON.stringify(c)}`);
    tokens.push({ kind: 'op', text: op, value: op });
    i += op.length;
  }
  return tokens;
}

/** Statement keywords that make SQL something other than a query, refused anywhere when unquoted. */
const forbiddenKeywords = new Set([
  'ATTACH',
  'DETACH',
  'PRAGMA',
  'INSERT',
  'UPDATE',
  'DELETE',
  'UPSERT',
  'CREATE',
  'DROP',
  'ALTER',
  'VACUUM',
  'REINDEX',
  'ANALYZE',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'SAVEPOINT',
  'RELEASE',
  'TRANSACTION',
  'EXPLAIN',
]);

/**
 * Functions that read or write files, reach the network, load code or change the database:
 * SQLite's file and extension functions, GDAL's ogr_* helpers (ogr_geocode goes online,
 * ogr_datasource_load_layers opens any path), and SpatiaLite's import/export, metadata,
 * stored-procedure, XML-blob and PROJ-database functions.
 */
const forbiddenFunctionNames = new Set(['LOAD_EXTENSION', 'READFILE', 'WRITEFILE', 'EDIT', 'FSDIR', 'ZIPFILE', 'SHELL', 'SYSTEM', 'LINES', 'LINES_READ']);
const forbiddenFunctionPatterns = [
  /^OGR_/,
  /^FTS/,
  /FILE/,
  /LOAD/,
  /STORE/,
  /^IMPORT/,
  /^EXPORT/,
  /^SQLPROC/,
  /^GPKG/,
  /^PROJ_/,
  /^PRAGMA_/,
  /^SQLITE_/,
  /^RL2_/,
  /^WMS_/,
  /^TOPO/,
  /^ST_.*TOPO/,
  /^VIRTUAL/,
  /^GEOCODE/,
  /^(INIT|CREATE|DROP|REGISTER|UNREGISTER|RECOVER|DISCARD|DISABLE|ENABLE|UPDATE|REMOVE|RENAME|CLONE|COPY|CHECK|INVALIDATE|UPGRADE|PURGE|SETDECIMALPRECISION)/,
];

/** String contents that point GDAL or PROJ at files or virtual file systems. */
const forbiddenLiteral = /\/vsi[a-z0-9_]*|[+]?\b(?:nadgrids|geoidgrids|init)\s*=|\bfile:/i;

export function isForbiddenFunction(name: string): boolean {
  const upper = name.toUpperCase();
  return forbiddenFunctionNames.has(upper) || forbiddenFunctionPatterns.some((p) => p.test(upper));
}

function checkTokens(tokens: Token[]): void {
  tokens.forEach((t, i) => {
    const next = tokens[i + 1];
    if (t.kind === 'word' && forbiddenKeywords.has(t.value)) {
      throw refuse(`The SQL may only read: ${t.text} is not allowed`, { keyword: t.value });
    }
    // Table-valued functions can be named without parentheses: FROM pragma_database_list.
    if ((t.kind === 'word' || t.kind === 'quoted') && /^(PRAGMA_|SQLITE_DBPAGE|FTS)/i.test(t.value)) {
      throw refuse(`The SQL may not use ${t.kind === 'word' ? t.text : t.value}`, { function: t.value });
    }
    if ((t.kind === 'word' || t.kind === 'quoted') && next?.text === '(' && isForbiddenFunction(t.kind === 'word' ? t.text : t.value)) {
      throw refuse(`The SQL function ${t.kind === 'word' ? t.text : t.value}() is not allowed (file, network or database functions are refused)`, {
        function: t.kind === 'word' ? t.text : t.value,
      });
    }
    if (t.kind === 'string' && forbiddenLiteral.test(t.value)) {
      throw refuse('The SQL refers to a file or virtual file system path, which is not allowed', {});
    }
  });
}

const rebuild = (tokens: Token[]) => tokens.map((t) => t.text).join(' ');

export interface CheckedSelect {
  /** The query rebuilt from its tokens, comments and trailing semicolons removed. */
  sql: string;
  /** The tokens of `sql`. */
  tokens: Token[];
}

/**
 * Accepts exactly one SELECT (or WITH … SELECT) and refuses ATTACH, PRAGMA, writes, several
 * statements, parameters and file/network/extension functions, with invalid_transformation.
 */
export function checkSelectSql(sql: string): CheckedSelect {
  if (typeof sql !== 'string' || sql.trim() === '') throw refuse('The SQL is empty');
  if (sql.length > 100_000) throw refuse('The SQL is longer than 100 000 characters');
  const tokens = tokenize(sql);
  while (tokens.length && tokens[tokens.length - 1]!.text === ';') tokens.pop();
  if (tokens.length === 0) throw refuse('The SQL is empty');
  if (tokens.some((t) => t.text === ';')) throw refuse('The SQL must be a single statement: remove the extra statements after ";"');
  const first = tokens[0]!;
  if (!(first.kind === 'word' && (first.value === 'SELECT' || first.value === 'WITH'))) {
    throw refuse('The SQL must be a single SELECT (or WITH … SELECT) against the relation "source"');
  }
  checkTokens(tokens);
  if (first.value === 'WITH') {
    // The statement after the common table expressions must be a SELECT: find the first
    // top-level word that is not part of a CTE definition.
    let depth = 0;
    let main: Token | undefined;
    for (let i = 1; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t.text === '(') depth++;
      else if (t.text === ')') depth--;
      else if (depth === 0 && t.kind === 'word' && (t.value === 'SELECT' || t.value === 'VALUES')) {
        main = t;
        break;
      }
    }
    if (!main) throw refuse('The SQL must end in a SELECT after its WITH clause');
  }
  let depth = 0;
  for (const t of tokens) {
    if (t.text === '(') depth++;
    if (t.text === ')' && --depth < 0) throw refuse('The SQL has an unmatched ")"');
  }
  if (depth !== 0) throw refuse('The SQL has an unmatched "("');
  return { sql: rebuild(tokens), tokens };
}

/**
 * Accepts one SQL expression (a filter condition, a computed value) to be placed inside a
 * query we build: balanced parentheses, no statement separators, same function and keyword rules.
 * Returns it rebuilt from tokens, in parentheses.
 */
export function checkSqlExpression(expression: string, what = 'expression'): string {
  if (typeof expression !== 'string' || expression.trim() === '') throw refuse(`The ${what} is empty`);
  const tokens = tokenize(expression);
  if (tokens.length === 0) throw refuse(`The ${what} is empty`);
  if (tokens.some((t) => t.text === ';')) throw refuse(`The ${what} must be a single expression, without ";"`);
  checkTokens(tokens);
  let depth = 0;
  for (const t of tokens) {
    if (t.text === '(') depth++;
    if (t.text === ')' && --depth < 0) throw refuse(`The ${what} has an unmatched ")"`);
    if (depth === 0 && t.text === ',') throw refuse(`The ${what} must be a single value; use a function for several arguments`);
  }
  if (depth !== 0) throw refuse(`The ${what} has an unmatched "("`);
  return `(${rebuild(tokens)})`;
}

/** A name as an SQLite identifier literal. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A value as an SQLite string literal. */
export function quoteString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
