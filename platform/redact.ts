/**
 * Secret-shaped keys are removed from anything that is logged or put in an error.
 * One list, so the logger, the error handler and the connectors agree.
 */
const secretKey = /pass(word)?|secret|token|private_?key|api_?key|credential|authorization|cookie|session/i;

export function isSecretKey(key: string): boolean {
  return secretKey.test(key);
}

export function redact<T>(value: T, depth = 0): T {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = isSecretKey(k) && typeof v !== 'boolean' ? '[redacted]' : redact(v, depth + 1);
  }
  return out as T;
}

/** Replaces tokens and URL credentials that slip into free text (driver error messages, for example). */
export function scrubText(text: string): string {
  return text
    .replace(/svcpat_[0-9A-Za-z]+/g, 'svcpat_[redacted]')
    .replace(/(\w+:\/\/[^:/\s]+:)[^@\s]+@/g, '$1[redacted]@')
    .replace(/(password\s*[=:]\s*)('[^']*'|"[^"]*"|\S+)/gi, '$1[redacted]');
}
