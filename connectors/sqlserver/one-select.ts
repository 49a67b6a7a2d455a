import { ConnectorError } from '../../domain/transfers.js';

/*
 * A user's query for a SQL Server Source must stay one SELECT inside the derived table it is
 * wrapped in (`SELECT … FROM (<query>) AS geoflow_query`). T-SQL needs no separator between
 * statements, so `SELECT 1 AS x) AS q DELETE FROM dbo.t SELECT * FROM (SELECT 1 AS y` closes the
 * wrapping and adds statements to the batch (issue 32). SQL Server has no read-only session to
 * fall back on, so the text is read here the way SQL Server's lexer reads it, before anything is
 * sent: string literals ('…' with '' inside, N'…'), quoted names ([…] with ]] inside, "…" with ""
 * inside), -- comments to the end of the line and /* … *\/ comments, which nest. Outside those,
 * its parentheses must balance without ever closing one it did not open, and it must hold no `;`
 * and no GO line: inside parentheses only a query expression can stand, so nothing of it can
 * become a statement of its own. Anything unterminated is refused too.
 */

function refuse(why: string): never {
  throw new ConnectorError('invalid_data', `The query must be one SELECT statement: ${why}`, {}, false);
}

/** The query, checked: one SELECT that cannot leave the parentheses it is wrapped in (else invalid_data). */
export function oneSelect(query: string): string {
  const text = query.trim().replace(/[;\s]+$/, '');
  let depth = 0;
  let firstWord: string | null = null;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '-' && next === '-') {
      const end = text.slice(i).search(/[\r\n]/);
      i = end < 0 ? n : i + end;
    } else if (c === '/' && next === '*') {
      let nesting = 1;
      i += 2;
      while (i < n && nesting > 0) {
        const pair = text.slice(i, i + 2);
        nesting += pair === '/*' ? 1 : pair === '*/' ? -1 : 0;
        i += pair === '/*' || pair === '*/' ? 2 : 1;
      }
      if (nesting > 0) refuse('a /* comment is not closed');
    } else if (c === "'" || c === '"' || c === '[') {
      const close = c === '[' ? ']' : c;
      i++;
      for (;;) {
        if (i >= n) refuse(c === "'" ? 'a string literal is not closed' : `a quoted name (${c}…${close}) is not closed`);
        if (text[i] === close) {
          if (text[i + 1] === close) i += 2;
          else break;
        } else i++;
      }
      i++;
      firstWord ??= '';
    } else if (c === '(') {
      depth++;
      i++;
    } else if (c === ')') {
      if (--depth < 0) refuse('it closes a parenthesis it did not open, which would end the query it is read as');
      i++;
    } else if (c === ';') {
      refuse('it holds a ";" (one statement, no separators)');
    } else if (/[A-Za-z_@#]/.test(c)) {
      const word = /^[A-Za-z_@#$0-9]+/.exec(text.slice(i))![0];
      firstWord ??= word.toUpperCase();
      // A GO line is a batch separator for sqlcmd and SSMS: not something to send.
      if (word.toUpperCase() === 'GO' && /(^|[\r\n])[ \t]*$/.test(text.slice(0, i)) && /^[ \t]*(\d+[ \t]*)?([\r\n]|$)/.test(text.slice(i + 2)))
        refuse('it holds a GO line (one batch)');
      i += word.length;
    } else i++;
  }
  if (depth !== 0) refuse('its parentheses do not balance');
  if (firstWord !== 'SELECT') refuse(`it begins with ${firstWord ? firstWord : 'something other than SELECT'}, not SELECT`);
  return text;
}
