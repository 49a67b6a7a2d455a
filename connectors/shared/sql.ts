/**
 * A user's SELECT as a subquery `(…)`: trailing semicolons dropped, on lines of its own so that a
 * trailing `--` comment ends before the closing parenthesis. Wrapped like this, the text can only
 * be one query: a second statement or a data-modifying one is a syntax error.
 */
export const asSubquery = (query: string) => `(\n${query.trim().replace(/[;\s]+$/, '')}\n)`;
