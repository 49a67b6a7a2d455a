import { createHmac } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline, Readable, Transform } from 'node:stream';

/*
 * What a webhook receiver gets: the converted file as the raw request body, described by
 * headers, optionally signed. Kept apart from the sending so the payload is one readable place.
 */

export type WebhookConfig = {
  url: string;
  headers: Record<string, string>;
  signing_secret?: string;
  bearer_token?: string;
};

export interface Payload {
  event: 'delivery' | 'ping';
  deliveryId: string;
  /** Unix seconds, part of what is signed, so a replay cannot pass as fresh. */
  timestamp: number;
  contentType: string;
  /** Bytes of the body; the body itself comes from `open()`. */
  length: number;
  file?: { filename: string; format: string; layers: string[] };
}

/** `sha256=<hex>` of HMAC-SHA256(secret, "<timestamp>." + body), the body streamed from `chunks`. */
export async function signature(secret: string, timestamp: number, chunks: AsyncIterable<Buffer | string> | Iterable<string>): Promise<string> {
  const hmac = createHmac('sha256', secret).update(`${timestamp}.`);
  for await (const chunk of chunks) hmac.update(chunk);
  return `sha256=${hmac.digest('hex')}`;
}

/** A header value that stays ASCII: percent-encoding for names in any script. */
const ascii = (s: string) => encodeURIComponent(s);

/** The request headers of a payload (the signature is added by the caller, after hashing the body). */
export function payloadHeaders(config: WebhookConfig, payload: Payload): Record<string, string> {
  const headers: Record<string, string> = {
    ...config.headers,
    'content-type': payload.contentType,
    'content-length': String(payload.length),
    'x-geoflow-event': payload.event,
    'x-geoflow-delivery': payload.deliveryId,
    'idempotency-key': payload.deliveryId,
    'x-geoflow-timestamp': String(payload.timestamp),
  };
  if (payload.file) {
    const { filename, format, layers } = payload.file;
    headers['content-disposition'] = `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${ascii(filename)}`;
    headers['x-geoflow-filename'] = ascii(filename);
    headers['x-geoflow-format'] = format;
    headers['x-geoflow-layers'] = layers.map(ascii).join(',');
  }
  if (config.bearer_token) headers.authorization = `Bearer ${config.bearer_token}`;
  return headers;
}

/** The file as a request body, reporting bytes as they leave (an activity heartbeats with it). */
export function fileBody(file: string, onBytes?: (sent: number) => void): ReadableStream {
  let sent = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      onBytes?.(sent);
      done(null, chunk);
    },
  });
  // pipeline, not pipe: a read error must fail the request instead of leaving it hanging
  pipeline(createReadStream(file), meter, () => {});
  return Readable.toWeb(meter) as ReadableStream;
}

export const fileChunks = (file: string) => createReadStream(file) as AsyncIterable<Buffer>;
