import { open } from 'node:fs/promises';
import { ConnectorError } from '../../domain/transfers.js';
import { reasonOfStatus } from '../shared/policy/classify.js';
import type { ConnectorContext } from '../types.js';
import type { DriveHandle } from './client.js';

/*
 * Drive's resumable upload (Drive v3 "Perform a resumable upload"), for outputs too large to send
 * in one request: a POST (new file) or PATCH (new revision) with the metadata opens a session
 * whose URI comes back in Location; the bytes then go in PUTs of CHUNK bytes with Content-Range,
 * each answered 308 with the Range received so far, the last one 200/201 with the file. A chunk
 * that fails is sent again from what the server says it has. googleapis-common has no resumable
 * uploads, so the session is driven here, through the authenticated client's own request().
 */

export const RESUMABLE_FROM_BYTES = 5 * 1024 * 1024;
/** A multiple of 256 KiB, as Drive requires for every chunk but the last. */
const CHUNK = 8 * 1024 * 1024;
const MAX_RETRIES_PER_CHUNK = 3;

export interface ResumableUpload {
  fileId?: string | undefined;
  metadata: Record<string, unknown>;
  file: string;
  bytes: number;
  mimeType: string;
}

interface Answer {
  status: number;
  headers: Headers | Record<string, string>;
  data: unknown;
}

/** A header of an answer: gaxios hands over a Headers-like object (not always the global class). */
const header = (h: Answer['headers'], name: string): string | null =>
  typeof (h as Headers).get === 'function' ? (h as Headers).get(name) : ((h as Record<string, string>)[name.toLowerCase()] ?? null);

export async function resumableUpload(d: DriveHandle, upload: ResumableUpload, ctx: ConnectorContext): Promise<{ id?: string | null }> {
  const what = `${d.label}: resumable upload`;
  const url = upload.fileId
    ? `${d.root}upload/drive/v3/files/${encodeURIComponent(upload.fileId)}?uploadType=resumable&supportsAllDrives=true&fields=id`
    : `${d.root}upload/drive/v3/files?uploadType=resumable&supportsAllDrives=true&fields=id`;
  const request = (options: Record<string, unknown>) =>
    d.auth.request({ ...options, signal: ctx.signal, validateStatus: () => true, retry: false }) as Promise<Answer>;
  const opened = await request({
    url,
    method: upload.fileId ? 'PATCH' : 'POST',
    headers: { 'content-type': 'application/json; charset=UTF-8', 'x-upload-content-type': upload.mimeType, 'x-upload-content-length': String(upload.bytes) },
    data: JSON.stringify(upload.metadata),
  });
  const session = header(opened.headers, 'location');
  if (opened.status >= 400)
    throw new ConnectorError(reasonOfStatus(opened.status), `${what} could not start (HTTP ${opened.status})`, { http_status: opened.status });
  if (!session) throw new ConnectorError('invalid_response', `${what}: no session URI in the answer`, {}, false);
  // The chunks carry the credentials: only to Drive's own origin, whatever the answer names.
  if (!URL.canParse(session, url) || new URL(session, url).origin !== new URL(url).origin)
    throw new ConnectorError('invalid_response', `${what}: the session URI is not on ${new URL(url).origin}`, {}, false);

  const handle = await open(upload.file, 'r');
  try {
    let offset = 0;
    let failures = 0;
    for (;;) {
      const length = Math.min(CHUNK, upload.bytes - offset);
      const chunk = Buffer.alloc(length);
      await handle.read(chunk, 0, length, offset);
      const answer = await request({
        url: session,
        method: 'PUT',
        headers: { 'content-range': `bytes ${offset}-${offset + length - 1}/${upload.bytes}`, 'content-type': upload.mimeType },
        data: chunk,
      }).catch((error: unknown) => ({ status: 0, headers: {}, data: error }) as Answer);
      if (answer.status === 200 || answer.status === 201) return answer.data as { id?: string | null };
      if (answer.status === 308) {
        // The server says how much it has: continue from there (all of this chunk, usually).
        const range = header(answer.headers, 'range');
        offset = range ? Number(/bytes=0-(\d+)/.exec(range)?.[1] ?? -1) + 1 : 0;
        failures = 0;
        ctx.progress?.({ bytes: offset });
        continue;
      }
      if ((answer.status === 0 || answer.status >= 500) && ++failures <= MAX_RETRIES_PER_CHUNK) continue;
      if (answer.status === 0)
        throw new ConnectorError('unreachable', `${what}: the connection failed while sending bytes ${offset}–${offset + length - 1}`, {});
      throw new ConnectorError(reasonOfStatus(answer.status), `${what} failed at byte ${offset} (HTTP ${answer.status})`, { http_status: answer.status });
    }
  } finally {
    await handle.close();
  }
}
