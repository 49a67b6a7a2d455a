import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A multipart/form-data body with one `file` field (and plain fields before it), for app.inject. */
export function multipartFile(file: string, filename = path.basename(file), field = 'file', fields: Record<string, string> = {}) {
  const boundary = `----svctest${Math.random().toString(16).slice(2)}`;
  const before = Object.entries(fields)
    .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    .join('');
  const head = Buffer.from(
    `${before}--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    payload: Buffer.concat([head, readFileSync(file), tail]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}
