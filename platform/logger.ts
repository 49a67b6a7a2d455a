import pino, { type Logger } from 'pino';

/** Structured JSON logs; anything under a secret-shaped path is censored before it is written. */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.secret',
  '*.secret_key',
  '*.private_key',
  '*.api_key',
  '*.configuration.password',
];

let stdout: pino.DestinationStream | undefined;

/**
 * The process's one log destination: stdout, buffered. A write per line cost more than the rest
 * of a trivial request (bench/api/NOTES.md), so lines are written in batches of 4 KiB, and at
 * least every 250 ms. pino flushes what is pending synchronously when the process exits and after
 * every fatal line; a SIGKILL can lose the last quarter second.
 */
export function logDestination(): pino.DestinationStream {
  return (stdout ??= pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 } as Parameters<typeof pino.destination>[0]));
}

export function createLogger(level: string, name: string): Logger {
  return pino({ name, level, redact: { paths: redactPaths, censor: '[redacted]' } }, logDestination());
}

/**
 * The access log: one line per request with only method, URL, status, time and request id, none
 * of which can hold a secret (tokens and cookies travel in headers, never in URLs), so it skips
 * redaction, which tripled the cost of each line.
 */
export function createAccessLogger(level: string, stream: NodeJS.WritableStream | pino.DestinationStream = logDestination()): Logger {
  return pino({ name: 'access', level }, stream as pino.DestinationStream);
}
