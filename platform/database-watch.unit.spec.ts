import { ConnectionError, StatementTimeoutError, UniqueIntegrityConstraintViolationError } from 'slonik';
import { describe, expect, it } from 'vitest';
import { looksLikeConnectionFailure } from './database-watch.js';

describe('looksLikeConnectionFailure', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('knows a lost, refused or timed-out connection, from pg, slonik or the socket, also as a cause', () => {
    expect(looksLikeConnectionFailure(new ConnectionError('timeout expired', { cause: new Error('timeout expired') }))).toBe(true);
    expect(looksLikeConnectionFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(looksLikeConnectionFailure(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(looksLikeConnectionFailure(withCode('ECONNREFUSED'))).toBe(true);
    expect(looksLikeConnectionFailure(withCode('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(looksLikeConnectionFailure(new Error('query failed', { cause: withCode('ETIMEDOUT') }))).toBe(true);
  });

  it('does not take a refused statement for a lost connection', () => {
    expect(looksLikeConnectionFailure(withCode('23505', 'duplicate key value violates unique constraint'))).toBe(false);
    expect(looksLikeConnectionFailure(new UniqueIntegrityConstraintViolationError(withCode('23505') as never))).toBe(false);
    expect(looksLikeConnectionFailure(new StatementTimeoutError(withCode('57014') as never))).toBe(false);
    expect(looksLikeConnectionFailure(new Error('relation "x" does not exist'))).toBe(false);
    expect(looksLikeConnectionFailure(null)).toBe(false);
  });
});
