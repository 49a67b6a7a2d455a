import net from 'node:net';
import tls from 'node:tls';
import nodemailer from 'nodemailer';
import { z } from 'zod';
import { ConnectorError, type ConnectorFailureReason } from '../domain/transfers.js';
import { classify } from '../connectors/shared/policy/classify.js';
import { egressAddress } from '../connectors/shared/policy/egress.js';
import { host, port, secret } from '../connectors/shared/fields.js';
import { subjectOf, textOf } from './message.js';
import { defineNotifier } from './types.js';

/*
 * An address as SMTP limits it (RFC 5321: a local part of at most 64 characters, a domain of
 * labels), as a pattern the OpenAPI document publishes and the server checks as written: a
 * `format: email` would leave each client to its own idea of an address (schemathesis' is stricter
 * than zod's and found a 100-character local part accepted).
 */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const EMAIL_PATTERN = `^[A-Za-z0-9.!#$%&'*+/=?^_\`{|}~-]{1,64}@${LABEL}(?:\\.${LABEL})+$`;
const address = z.string().max(254).regex(new RegExp(EMAIL_PATTERN), { error: 'an email address (local part up to 64 characters, then @ and a domain name)' });

const configuration = z.strictObject({
  host,
  port: port(587),
  security: z
    .enum(['starttls', 'tls', 'none'])
    .default('starttls')
    .describe(
      'starttls: plain connection upgraded with STARTTLS, which the server must offer (port 587); tls: TLS from the first byte (port 465); none: no TLS (a relay on a trusted network only: credentials and messages travel in the clear)',
    ),
  username: z.string().min(1).max(255).optional().describe('SMTP AUTH user; without it, no AUTH'),
  password: secret('SMTP AUTH password'),
  from: address.describe('The sender address (From)'),
  to: z.array(address).min(1).max(20).describe('Recipients'),
  ca_certificate: z
    .string()
    .max(65_536)
    .regex(/-----BEGIN CERTIFICATE-----/, 'a PEM certificate')
    .optional()
    .describe("PEM of a CA to trust besides the system's (a relay with a certificate of your own CA)"),
});

type EmailChannel = z.output<typeof configuration>;

const describe = (c: EmailChannel) => `SMTP ${c.host}:${c.port}`;

const smtpReasons: Record<string, ConnectorFailureReason> = {
  EAUTH: 'authentication_failed',
  ENOAUTH: 'authentication_failed',
  ETLS: 'tls_error',
  EDNS: 'unreachable',
  ECONNECTION: 'unreachable',
  ETIMEDOUT: 'timeout',
  EENVELOPE: 'invalid_response',
  EMESSAGE: 'invalid_response',
};

/**
 * An SMTP failure, classified: nodemailer's codes, then the server's reply code (4xx: try again
 * later; 5xx: refused for good), then the socket's own error.
 */
function classifySmtp(error: unknown, c: EmailChannel): ConnectorError {
  const e = error as { code?: string; responseCode?: number; response?: string; message?: string };
  const what = describe(c);
  const details = { host: c.host, port: c.port, ...(e.responseCode ? { smtp_code: e.responseCode } : {}) };
  if (/certificate|self.signed|SSL|TLS/i.test(e.message ?? '') && e.code !== 'EAUTH') {
    return new ConnectorError('tls_error', `${what} failed the TLS handshake or certificate check`, details, false);
  }
  if (e.responseCode && e.responseCode >= 400 && e.responseCode < 500) {
    return new ConnectorError('server_error', `${what} refused the message for now (SMTP ${e.responseCode})`, details, true);
  }
  const reason = e.code ? smtpReasons[e.code] : undefined;
  if (reason === 'authentication_failed') return new ConnectorError(reason, `${what} refused the credentials`, details, false);
  if (e.responseCode && e.responseCode >= 500) {
    return new ConnectorError('invalid_response', `${what} refused the message (SMTP ${e.responseCode})`, details, false);
  }
  if (reason === 'tls_error') return new ConnectorError(reason, `${what} offered no STARTTLS, or its TLS handshake failed`, details, false);
  if (reason) return new ConnectorError(reason, `${what} ${reason === 'timeout' ? 'did not answer in time' : 'could not be reached'}`, details);
  return classify(error, what, details);
}

export const emailNotifier = defineNotifier({
  type: 'email',
  label: 'Email (SMTP)',
  description: 'Sends each notification as a plain-text email through an SMTP server (STARTTLS or TLS, with AUTH).',
  configuration,
  secrets: ['password'],
  requiredSecrets: [],
  example: {
    host: 'smtp.example.org',
    port: 587,
    security: 'starttls',
    username: 'geoflow',
    password: '…',
    from: 'geoflow@example.org',
    to: ['gis-team@example.org'],
  },
  notes: [
    'A plain-text UTF-8 email per notification, subject `[geoflow] Job "<name>" failed` (or disabled itself, recovered, succeeded, is running slowly), with the Job, the Run, its times, its error and a link to the Run page (when `SVC_PUBLIC_ORIGIN` is set); headers `X-Geoflow-Event` and `X-Geoflow-Delivery` (the notification id, the same on every retry).',
    '',
    "The server's certificate is verified against the system's CAs (and `ca_certificate` when given) for the host name configured, at TLS 1.2 or newer; `starttls` refuses a server that does not offer STARTTLS rather than sending in the clear. The connection goes to the address the outbound policy checked (README, Outbound connections), the host name kept for the certificate check.",
    '',
    '**Failures**: a refused login (`authentication_failed`), a TLS problem (`tls_error`) and a refusal of the message or a recipient (SMTP 5xx) are not retried; an unreachable server, a timeout and a temporary refusal (SMTP 4xx, greylisting) are, with backoff (8 attempts in about 20 minutes).',
  ].join('\n'),
  endpoint: (c) => `${describe(c)} → ${c.to.join(', ')}`,
  async send(c, facts, ctx) {
    const target = await egressAddress(c.host, c.port);
    const transport = nodemailer.createTransport({
      host: target,
      port: c.port,
      secure: c.security === 'tls',
      requireTLS: c.security === 'starttls',
      ignoreTLS: c.security === 'none',
      // The name the certificate must carry (the socket goes to the checked address).
      ...(net.isIP(c.host) ? {} : { servername: c.host }),
      ...(c.username ? { auth: { user: c.username, pass: c.password ?? '' } } : {}),
      // Giving `ca` replaces Node's bundled CAs: a CA of one's own is added to them.
      tls: { minVersion: 'TLSv1.2', rejectUnauthorized: true, ...(c.ca_certificate ? { ca: [...tls.rootCertificates, c.ca_certificate] } : {}) },
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
      name: 'geoflow',
    });
    const abort = () => transport.close();
    ctx.signal.addEventListener('abort', abort, { once: true });
    try {
      await transport.sendMail({
        from: c.from,
        to: c.to,
        subject: subjectOf(facts),
        text: textOf(facts),
        headers: { 'X-Geoflow-Event': facts.event, 'X-Geoflow-Delivery': facts.delivery_id },
      });
    } catch (error) {
      throw classifySmtp(error, c);
    } finally {
      ctx.signal.removeEventListener('abort', abort);
      transport.close();
    }
  },
});
