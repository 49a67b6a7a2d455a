import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { classify, reasonOfStatus } from '../shared/policy/classify.js';
import { egressFetch } from '../shared/policy/egress.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { httpUrl, secret } from '../shared/fields.js';
import { plainHeaders } from '../shared/http/http-fields.js';
import { testSteps } from '../shared/http/http-test.js';
import { defineConnector, type ConnectorContext, type DestinationSupport } from '../types.js';
import { fileBody, fileChunks, payloadHeaders, signature, type Payload, type WebhookConfig } from './request.js';

const configuration = z.strictObject({
  url: httpUrl.describe('Endpoint that receives the converted file in a POST (no redirects are followed)'),
  headers: plainHeaders.describe('Extra request headers, stored in plain text (credentials belong in bearer_token)'),
  signing_secret: secret('Shared secret: each request then carries X-Geoflow-Signature, an HMAC-SHA256 of the timestamp and the body'),
  bearer_token: secret('Token sent as Authorization: Bearer'),
});

/** How often a delivery reports progress (an activity heartbeats with it). */
const PROGRESS_EVERY_BYTES = 4 * 1024 * 1024;

interface Body {
  /** The body to send (opened when the request starts). */
  stream(): ReadableStream | string;
  /** The same bytes again, to sign before sending (files are read twice rather than held in memory). */
  chunks(): AsyncIterable<Buffer | string> | Iterable<string>;
}

/** Posts one payload and judges the answer: 2xx delivered; anything else a classified ConnectorError. */
async function post(config: WebhookConfig, payload: Payload, body: Body, ctx: ConnectorContext): Promise<number> {
  const label = publicUrl(config.url);
  const headers = payloadHeaders(config, payload);
  if (config.signing_secret) headers['x-geoflow-signature'] = await signature(config.signing_secret, payload.timestamp, body.chunks());
  let response: Response;
  try {
    response = await egressFetch(config.url, {
      method: 'POST',
      headers: { 'user-agent': 'geoflow', ...headers },
      body: body.stream(),
      duplex: 'half',
      redirect: 'manual',
      signal: ctx.signal,
    } as RequestInit);
  } catch (error) {
    throw classify(error, label, { url: label });
  }
  // The receiver's answer is never read or repeated: it could echo our headers back.
  await response.body?.cancel();
  const status = response.status;
  if (status >= 200 && status < 300) return status;
  const details = { url: label, http_status: status };
  if (status >= 300 && status < 400) {
    throw new ConnectorError(
      'invalid_response',
      `${label} answered a redirect (HTTP ${status}); webhooks are not redirected: save the final URL`,
      details,
      false,
    );
  }
  if (status === 413) throw new ConnectorError('too_large', `${label} refused a body of ${payload.length} bytes (HTTP 413)`, details, false);
  throw new ConnectorError(reasonOfStatus(status), `${label} answered HTTP ${status}`, details);
}

const destination: DestinationSupport<Record<string, never>, WebhookConfig> = {
  target: z.strictObject({}).describe('No target fields: the configuration says where the file goes'),
  deliverable: true,
  async deliver(config, _target, input, ctx) {
    const c = config;
    const { size } = await stat(input.file);
    const payload: Payload = {
      event: 'delivery',
      deliveryId: input.deliveryId,
      timestamp: Math.floor(Date.now() / 1000),
      contentType: input.mediaType ?? 'application/octet-stream',
      length: size,
      file: { filename: input.filename, format: input.format, layers: input.layers },
    };
    let reported = 0;
    const progress = (bytes: number) => {
      if (bytes - reported < PROGRESS_EVERY_BYTES) return;
      reported = bytes;
      ctx.progress?.({ bytes });
    };
    const status = await post(c, payload, { stream: () => fileBody(input.file, progress), chunks: () => fileChunks(input.file) }, ctx);
    return { target: { url: publicUrl(c.url), http_status: status }, bytes_written: size };
  },
};

/** Sends the converted output to an HTTP endpoint of the user's (a workflow engine, an ingest service, a chat bot …). */
export const webhook = defineConnector({
  type: 'webhook',
  label: 'Webhook',
  description: 'POSTs the converted output to an HTTP endpoint, optionally signed with HMAC-SHA256.',
  configuration,
  secrets: ['signing_secret', 'bearer_token'],
  example: { url: 'https://hooks.example.org/geoflow', signing_secret: '…' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: a local HTTP receiver in the tests that checks the signature, the timestamp and the delivery id',
  notes: [
    'A delivery is one `POST` to `url` whose body is the converted file itself, byte for byte (a `.zip` for shapefiles and other several-file outputs), streamed with its `Content-Length`. The body is not wrapped in JSON or multipart, so a receiver can store or forward it as is and check the signature over exactly the bytes it received. Headers describe it:',
    '',
    '| header | value |',
    '|---|---|',
    '| `Content-Type` | the media type of the output format (`application/geopackage+sqlite3`, `application/geo+json`, `application/zip` …), else `application/octet-stream` |',
    '| `Content-Disposition` | `attachment; filename="…"; filename*=UTF-8\'\'…` |',
    '| `X-Geoflow-Event` | `delivery` (or `ping` for a connection test) |',
    '| `X-Geoflow-Delivery`, `Idempotency-Key` | the delivery id: the same on every retry of one delivery, so a receiver can ignore repeats |',
    '| `X-Geoflow-Timestamp` | Unix time in seconds when this attempt was signed |',
    '| `X-Geoflow-Signature` | with a `signing_secret`: `sha256=` + hex HMAC-SHA256 of `<X-Geoflow-Timestamp>.<body>` |',
    '| `X-Geoflow-Filename` | the file name, percent-encoded (UTF-8) |',
    '| `X-Geoflow-Format` | the output format id (`GPKG`, `GeoJSON`, `ESRI Shapefile` …, see `GET /api/v1/formats`) |',
    '| `X-Geoflow-Layers` | the layer names, each percent-encoded, joined with `,` |',
    '| `Authorization` | `Bearer <bearer_token>` when one is saved |',
    '',
    'Plus the plain `headers` of the configuration. **Verifying** (receiver side): compute HMAC-SHA256 with the shared secret over the timestamp header, a `.`, then the raw body; compare it with the hex after `sha256=` in constant time; refuse timestamps more than five minutes from your clock (a replayed request keeps its old timestamp, and a new timestamp breaks the signature); remember delivery ids you have accepted and answer 2xx to a repeat without acting on it again. Because the timestamp is signed with the body, the signature covers `<timestamp>.<body>` rather than the body alone.',
    '',
    "**Answers**: any 2xx is delivered. Redirects are not followed (`invalid_response`: save the final URL). 401 → `authentication_failed`, 403 → `permission_denied`, 404/410 → `not_found`, 413 → `too_large`, other 4xx → `invalid_response`: none of these is retried. 5xx, 429, 408, timeouts and refused connections are retried (a Workspace delivery a few times, a Run by its retry policy), each attempt with a fresh timestamp and the same delivery id. The receiver's answer body is never read or shown. Delivery is at least once: a receiver that acted on a request but answered 5xx, or whose answer was lost, gets it again, and the delivery id is how it tells.",
    '',
    '**Connection test**: a `POST` with `X-Geoflow-Event: ping`, the body `{"event":"ping"}` (`application/json`), a fresh delivery id, signed like a delivery; any 2xx passes. There is no destination target.',
  ].join('\n'),
  async test(config, ctx) {
    const c = config;
    const label = publicUrl(c.url);
    return testSteps({ url: label, signed: Boolean(c.signing_secret) }, label, async () => {
      const body = JSON.stringify({ event: 'ping' });
      const payload: Payload = {
        event: 'ping',
        deliveryId: `ping_${randomBytes(8).toString('hex')}`,
        timestamp: Math.floor(Date.now() / 1000),
        contentType: 'application/json',
        length: Buffer.byteLength(body),
      };
      const status = await post(c, payload, { stream: () => body, chunks: () => [body] }, ctx);
      return `${label} accepted a ping (HTTP ${status})`;
    });
  },
  destination,
});
