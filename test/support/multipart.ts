import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A multipart/form-data body with one `file` field, for app.inject. */
export function multipartFile(file: string, filename = path.basename(file), field = 'file') {
  const boundary = `----svctest${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    payload: Buffer.concat([head, readFileSync(file), tail]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}
