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
  stdout ??= pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 } as Parameters<typeof pino.destination>[0]);
  return stdout;
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

/**
 * A request's logger, made only when something logs through it. Fastify gives every request a
 * child logger (request id bound); with redaction configured a pino child costs about 3 µs, a
 * tenth of a trivial route's whole time, and most requests never log through it (the access
 * line has its own logger). Used as fastify's childLoggerFactory.
 */
export class LazyChildLogger {
  #real: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly own: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions,
  ) {}
  private get real(): Logger {
    this.#real ??= this.parent.child(this.own, this.options);
    return this.#real;
  }
  get level(): string {
    return this.#real?.level ?? this.parent.level;
  }
  set level(value: string) {
    this.real.level = value;
  }
  fatal(...args: unknown[]) {
    (this.real.fatal as (...a: unknown[]) => void)(...args);
  }
  error(...args: unknown[]) {
    (this.real.error as (...a: unknown[]) => void)(...args);
  }
  warn(...args: unknown[]) {
    (this.real.warn as (...a: unknown[]) => void)(...args);
  }
  info(...args: unknown[]) {
    (this.real.info as (...a: unknown[]) => void)(...args);
  }
  debug(...args: unknown[]) {
    (this.real.debug as (...a: unknown[]) => void)(...args);
  }
  trace(...args: unknown[]) {
    (this.real.trace as (...a: unknown[]) => void)(...args);
  }
  silent() {}
  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return this.real.isLevelEnabled(level);
  }
  bindings(): pino.Bindings {
    return this.real.bindings();
  }
}
