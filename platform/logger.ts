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

export function createLogger(level: string, name: string): Logger {
  return pino({ name, level, redact: { paths: redactPaths, censor: '[redacted]' } });
}
