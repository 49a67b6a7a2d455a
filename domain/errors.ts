/**
 * A refusal by the domain, with the public error code of the API's envelope.
 * The status for each code is decided once, in api/errors.ts.
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (code: string, what: string, id: string) => new DomainError(code, `${what} ${id} was not found`, { id });
