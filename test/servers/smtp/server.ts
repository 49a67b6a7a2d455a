import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../../../devservers/ports.js';
import { stopProcess } from '../../../devservers/processes.js';

/*
 * A real SMTP server (aiosmtpd, serve.py) on a free loopback port with a certificate made for
 * the run (CN and SAN localhost, so clients verify it against `ca` by that name), STARTTLS or TLS,
 * and AUTH with a user made for the run. What it accepted is read back with messages().
 */

const python = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools/smtp/bin/python');

export interface ReceivedMail {
  mail_from: string;
  rcpt_tos: string[];
  auth_user: string | null;
  tls: boolean;
  /** The raw message, headers and body as sent (the body may be quoted-printable). */
  data: string;
  /** Decoded by Python's email package. */
  subject: string;
  headers: Record<string, string>;
  text: string;
}

export interface SmtpServer {
  host: 'localhost';
  port: number;
  username: string;
  password: string;
  /** PEM of the certificate the server presents (self-signed: it is its own CA). */
  ca: string;
  messages(): ReceivedMail[];
  stop(): Promise<void>;
}

export function smtpServerUnavailable(): string | false {
  return existsSync(python)
    ? false
    : `aiosmtpd is not installed in ${path.dirname(path.dirname(python))}: test/servers/smtp/install.sh (run by \`npm test\`) installs it`;
}

/** `tempfail`: how many messages to answer 451 (try again later) before accepting. */
export async function startSmtpServer(options: { mode?: 'starttls' | 'tls'; tempfail?: number } = {}): Promise<SmtpServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'smtp-'));
  const out = path.join(dir, 'received');
  mkdirSync(out);
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'pipe' },
  );
  const port = await freePort();
  const username = 'geoflow-notify';
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const args = [
    path.join(import.meta.dirname, 'serve.py'),
    String(port),
    options.mode ?? 'starttls',
    cert,
    key,
    username,
    password,
    out,
    String(options.tempfail ?? 0),
  ];
  const child = spawn(python, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`aiosmtpd did not start in 30 s\n${log}`)), 30_000);
    createInterface({ input: child.stdout! }).once('line', () => {
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`aiosmtpd exited with ${code}\n${log}`));
    });
  });
  return {
    host: 'localhost',
    port,
    username,
    password,
    ca: readFileSync(cert, 'utf8'),
    messages: () =>
      readdirSync(out)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => JSON.parse(readFileSync(path.join(out, f), 'utf8')) as ReceivedMail),
    async stop() {
      await stopProcess(child, () => child.stdin!.end());
    },
  };
}
