import { write, writeSync } from 'node:fs';
import { hostname } from 'node:os';
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

/**
 * Log lines buffered in memory and written to a file descriptor in chunks: at 64 KiB, at least
 * every 250 ms, and synchronously when the process exits. One write is in flight at a time, so
 * chunks never interleave, and a partial write (a full pipe) is finished before the next one.
 * pino's own destination (sonic-boom) measured the byte length of its whole pending buffer on
 * every line, a cost that grew with the buffer and made one access line a third of a trivial
 * request's CPU (bench/api/NOTES.md). Above `maxPending` characters (a reader that stopped
 * reading) lines are dropped and counted, and the count is written once the pipe drains.
 */
export class BufferedLogDestination {
  private chunks: string[] = [];
  private pending = 0;
  private writing = false;
  private dropped = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly fd = 1,
    private readonly chunkSize = 64 * 1024,
    private readonly maxPending = 16 * 1024 * 1024,
  ) {
    this.timer = setInterval(() => this.flush(), 250);
    this.timer.unref();
    process.once('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    if (this.pending > this.maxPending) {
      this.dropped += 1;
      return false;
    }
    this.chunks.push(line);
    this.pending += line.length;
    if (this.pending >= this.chunkSize) this.flush();
    return true;
  }

  private take(): Buffer {
    if (this.dropped) {
      this.chunks.push(`{"level":40,"time":${Date.now()},"msg":"${this.dropped} log lines dropped: the log reader fell behind"}\n`);
      this.dropped = 0;
    }
    const data = Buffer.from(this.chunks.join(''));
    this.chunks = [];
    this.pending = 0;
    return data;
  }

  /** Starts writing what is pending unless a write is in flight (its end starts the next). */
  flush(): void {
    if (this.writing || this.pending === 0) return;
    this.writing = true;
    this.send(this.take());
  }

  private send(data: Buffer): void {
    write(this.fd, data, 0, data.length, null, (error, written) => {
      if (error && (error as NodeJS.ErrnoException).code === 'EAGAIN') {
        setTimeout(() => this.send(data), 10).unref();
        return;
      }
      // Anything else (a closed stdout) leaves nothing to do for the lines: they are dropped.
      if (!error && written < data.length) {
        this.send(data.subarray(written));
        return;
      }
      this.writing = false;
      if (this.pending >= this.chunkSize) this.flush();
    });
  }

  /** What is pending, written at once (at exit, when no event loop is left for a callback). */
  flushSync(): void {
    if (this.pending === 0) return;
    let data = this.take();
    while (data.length) {
      try {
        data = data.subarray(writeSync(this.fd, data));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      }
    }
  }
}

let stdout: BufferedLogDestination | undefined;

/** The process's one log destination: stdout, buffered (BufferedLogDestination). */
export function logDestination(): pino.DestinationStream {
  stdout ??= new BufferedLogDestination(1);
  return stdout;
}

export function createLogger(level: string, name: string): Logger {
  return pino({ name, level, redact: { paths: redactPaths, censor: '[redacted]' } }, logDestination());
}

/** What the access line says of one request. */
export interface AccessEntry {
  reqId: string;
  method: string;
  url: string;
  status: number;
  ms: number;
}

/**
 * The access log: one line per request with only method, URL, status, time and request id, none
 * of which can hold a secret (tokens and cookies travel in headers, never in URLs). The line is
 * written by hand in pino's own shape (`{"level":30,"time":…,"pid":…,"hostname":…,"name":"access",
 * …,"msg":"request"}`) into the same buffered destination: pino's general-purpose formatting of
 * these five fields cost about a third of a trivial request's CPU (bench/api/NOTES.md). Null when
 * the level leaves info lines out.
 */
export function createAccessLog(
  level: string,
  stream: NodeJS.WritableStream | pino.DestinationStream = logDestination(),
): ((entry: AccessEntry) => void) | null {
  if ((pino.levels.values[level] ?? pino.levels.values.info!) > pino.levels.values.info!) return null;
  const after = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"name":"access","reqId":`;
  return (e) => {
    stream.write(
      `{"level":30,"time":${Date.now()}${after}${JSON.stringify(e.reqId)},"method":${JSON.stringify(e.method)},"url":${JSON.stringify(e.url)},"status":${e.status},"ms":${e.ms},"msg":"request"}\n`,
    );
  };
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
