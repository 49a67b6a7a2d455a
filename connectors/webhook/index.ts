import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { classify, reasonOfStatus } from '../shared/policy/classify.js';
import { egressFetch } from '../shared/policy/egress.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { testSteps } from '../shared/http/http-test.js';
import { fileBody, fileChunks, payloadHeaders, signature, type Payload, type WebhookConfig } from './request.js';
import { webhookDeclaration } from './declaration.js';
import { defineConnector, type ConnectorContext, type DestinationBehaviour } from '../types.js';

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

const destination = {
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
} satisfies DestinationBehaviour<Record<string, never>, WebhookConfig>;

/** Sends the converted output to an HTTP endpoint of the user's (a workflow engine, an ingest service, a chat bot …). */
export const webhook = defineConnector(webhookDeclaration, {
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
