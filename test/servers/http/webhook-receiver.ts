import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { listenStandIn, readBody } from '../standin.js';

/*
 * A webhook receiver written the way the webhook connector's notes tell users to write one,
 * independently of the connector's code: it checks the bearer token, the HMAC-SHA256 signature
 * over "<timestamp>.<body>" in constant time and the timestamp's age, and treats a repeated
 * delivery id as already done. Suites script its answers (e.g. 503 first) and read what arrived.
 */

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** null when the receiver has no secret to check with. */
  signatureValid: boolean | null;
  /** The delivery id was accepted before: acknowledged without acting again. */
  duplicate: boolean;
  /** The status this request was answered with. */
  status: number;
}

export interface WebhookReceiverOptions {
  secret?: string;
  bearer?: string;
  /** Statuses for the first requests, in order; 200 after them (or whatever verification decides). */
  answers?: number[];
  /** Oldest timestamp accepted, in seconds (default 300). */
  toleranceSeconds?: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Deliveries acted on once each (2xx, first time their id was seen). */
  accepted(): ReceivedDelivery[];
  stop(): Promise<void>;
}

export function verify(secret: string, headers: IncomingHttpHeaders, body: Buffer, toleranceSeconds = 300): boolean {
  const timestamp = String(headers['x-geoflow-timestamp'] ?? '');
  const given = /^sha256=([0-9a-f]{64})$/.exec(String(headers['x-geoflow-signature'] ?? ''))?.[1];
  if (!given || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}

export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const seen = new Set<string>();
  const answers = [...(options.answers ?? [])];
  const standIn = await listenStandIn(async (req, res) => {
    const body = await readBody(req);
    const signatureValid = options.secret ? verify(options.secret, req.headers, body, options.toleranceSeconds) : null;
    const id = String(req.headers['x-geoflow-delivery'] ?? '');
    let status = answers.shift() ?? 200;
    if (options.bearer && req.headers.authorization !== `Bearer ${options.bearer}`) status = 401;
    else if (signatureValid === false) status = 401;
    const duplicate = status < 300 && seen.has(id);
    if (status < 300) seen.add(id);
    received.push({ headers: req.headers, body, signatureValid, duplicate, status });
    // an answer that echoes what it got, as careless receivers do: the connector must not repeat it
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status, echo: req.headers }));
  });
  return {
    url: `${standIn.url}/hooks/geoflow`,
    received,
    accepted: () => received.filter((r) => r.status < 300 && !r.duplicate),
    stop: standIn.stop,
  };
}
