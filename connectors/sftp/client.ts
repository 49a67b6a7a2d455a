import { createHash } from 'node:crypto';
import SftpClient from 'ssh2-sftp-client';
import type { ConnectorContext } from '../types.js';
import { classify, describeReason } from '../shared/policy/classify.js';
import { egressAddress } from '../shared/policy/egress.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';

/** An sftp configuration as the connector receives it (validated, secrets decrypted). */
export interface SftpConfig {
  host: string;
  port: number;
  username: string;
  password?: string;
  private_key?: string;
  passphrase?: string;
  host_key_sha256?: string;
  base_path: string;
}

/** A host key's fingerprint as `ssh-keygen -l -E sha256` prints it. */
export const fingerprint = (key: Buffer) => `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;

export const sftpWhere = (c: SftpConfig, path?: string): Record<string, string | number> => ({
  host: c.host,
  port: c.port,
  username: c.username,
  ...(path === undefined ? {} : { path }),
});

export interface OpenSftp {
  client: SftpClient;
  /** The fingerprint the server presented (whether or not one was expected). */
  hostKey: string | null;
  close(): Promise<void>;
}

/**
 * Connects and authenticates with this configuration's password or key only (no agent, no
 * keyboard-interactive prompts), checking the host key when a fingerprint is configured. The
 * connection closes when ctx.signal aborts.
 */
export async function openSftp(c: SftpConfig, ctx: Pick<ConnectorContext, 'signal' | 'log'>): Promise<OpenSftp> {
  const what = `SFTP server ${c.host}:${c.port}`;
  if (!c.password && !c.private_key) {
    throw new ConnectorError('authentication_failed', `${what}: the configuration has neither a password nor a private key`, sftpWhere(c), false);
  }
  let presented: string | null = null;
  // ssh2-sftp-client prints connection events to the console unless given its own listeners.
  const client = new SftpClient('geoflow', {
    error: (error: unknown) => ctx.log.debug({ host: c.host, port: c.port, error: (error as Error)?.message }, 'SFTP connection error'),
    end: () => undefined,
    close: () => undefined,
  });
  const close = async () => {
    await client.end().catch(() => undefined);
  };
  const onAbort = () => void close();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    // The address the outbound policy checked (a name is resolved once, there): no second lookup to rebind.
    const address = await egressAddress(c.host, c.port);
    await abortable(
      client.connect({
        host: address,
        port: c.port,
        username: c.username,
        ...(c.private_key ? { privateKey: c.private_key, ...(c.passphrase ? { passphrase: c.passphrase } : {}) } : {}),
        ...(c.password ? { password: c.password } : {}),
        tryKeyboard: false,
        readyTimeout: 10_000,
        hostVerifier: (key: Buffer) => {
          presented = fingerprint(key);
          return !c.host_key_sha256 || presented === c.host_key_sha256;
        },
      }),
      ctx.signal,
    );
  } catch (error) {
    ctx.signal.removeEventListener('abort', onAbort);
    await close();
    if (ctx.signal.aborted) throw cancelled(what, sftpWhere(c));
    if (presented && c.host_key_sha256 && presented !== c.host_key_sha256) {
      throw new ConnectorError(
        'tls_error',
        `${what} presented the host key ${presented}, not the expected ${c.host_key_sha256}`,
        { ...sftpWhere(c), host_key_sha256: presented },
        false,
      );
    }
    throw sftpFailure(error, what, sftpWhere(c));
  }
  return {
    client,
    hostKey: presented,
    async close() {
      ctx.signal.removeEventListener('abort', onAbort);
      await close();
    },
  };
}

/**
 * Settles like `work`, or rejects as soon as the signal aborts: ssh2-sftp-client leaves a call
 * pending for ever when its connection is ended under it.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The connection was closed because ctx.signal aborted (a deadline or a cancelled activity). */
export const cancelled = (what: string, where: Record<string, unknown>) =>
  new ConnectorError('timeout', `${what}: the transfer was stopped (deadline or cancellation)`, where);

/** SFTP status codes (draft-ietf-secsh-filexfer) as ssh2 reports them. */
const statusReasons: Record<number, ConnectorFailureReason> = { 2: 'not_found', 3: 'permission_denied', 4: 'invalid_response' };
const messageReasons: [RegExp, ConnectorFailureReason][] = [
  [/authentication methods failed/i, 'authentication_failed'],
  [/timed out while waiting for handshake/i, 'timeout'],
  [/no matching (key exchange|host key|cipher)|handshake failed/i, 'tls_error'],
];

/**
 * A ConnectorError for any failure talking to the SSH server. The client's messages are matched
 * for the reason, not passed on (they hold remote paths of ours, never credentials, but ours
 * are clearer).
 */
export function sftpFailure(error: unknown, what: string, where: Record<string, unknown>): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const e = error as { code?: unknown; message?: string };
  const message = String(e?.message ?? '');
  const byMessage = messageReasons.find(([pattern]) => pattern.test(message))?.[1];
  const byStatus = typeof e?.code === 'number' ? statusReasons[e.code] : undefined;
  const reason = byMessage ?? byStatus;
  if (/cannot parse privatekey|bad passphrase|no passphrase given/i.test(message)) {
    return new ConnectorError('authentication_failed', `${what}: the private key cannot be read (wrong passphrase, or not an OpenSSH/PEM key)`, where);
  }
  if (reason) return new ConnectorError(reason, `${what} ${describeReason(reason)}`, where);
  return classify(error, what, where);
}
