import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ConnectorError } from '../../domain/transfers.js';
import { connectionTest } from '../shared/connection-test.js';
import { underBase } from '../shared/files/remote-paths.js';
import { PROGRESS_EVERY_BYTES } from '../shared/files/save-stream.js';
import { abortable, cancelled, openSftp, sftpFailure, sftpWhere, type OpenSftp, type SftpConfig } from './client.js';
import { sftpDeclaration } from './declaration.js';
import { defineConnector, type ConnectorContext, type DestinationBehaviour, type TestResult } from '../types.js';

const serverName = (c: SftpConfig) => `SFTP server ${c.host}:${c.port}`;

/** The base folder must exist and be a folder: deliveries create sub-folders below it, never it. */
async function requireBase(sftp: OpenSftp, c: SftpConfig): Promise<void> {
  const kind = await sftp.client.exists(c.base_path);
  if (kind === 'd') return;
  const message = kind ? `base_path "${c.base_path}" on ${serverName(c)} is not a folder` : `base_path "${c.base_path}" does not exist on ${serverName(c)}`;
  throw new ConnectorError('not_found', message, { ...sftpWhere(c), base_path: c.base_path }, false);
}

async function test(config: SftpConfig, ctx: ConnectorContext): Promise<TestResult> {
  const c = config;
  const tried: TestResult['tried'] = { ...sftpWhere(c), base_path: c.base_path, auth: c.private_key ? 'private_key' : 'password', host_key_sha256: null };
  let sftp: OpenSftp | undefined;
  try {
    return await connectionTest(
      tried,
      async () => {
        sftp = await openSftp(c, ctx);
        tried.host_key_sha256 = sftp.hostKey;
        await requireBase(sftp, c);
        const pinned = c.host_key_sha256 ? 'the host key matches' : `the host key ${sftp.hostKey} was not checked: set host_key_sha256 to pin it`;
        return `Logged in to ${serverName(c)} as ${c.username}; base_path is a folder; ${pinned}`;
      },
      (error) => {
        const failure = ctx.signal.aborted ? cancelled(serverName(c), sftpWhere(c)) : sftpFailure(error, serverName(c), sftpWhere(c));
        if (typeof failure.details.host_key_sha256 === 'string') tried.host_key_sha256 = failure.details.host_key_sha256;
        return failure;
      },
    );
  } finally {
    await sftp?.close();
  }
}

/**
 * Whether the server refused the posix-rename extension itself (not the rename): ssh2 says so
 * when the server did not announce posix-rename@openssh.com.
 */
const unsupported = (error: unknown) => /does not support/i.test(String((error as Error)?.message));

const destination = {
  async deliver(config, target, input, ctx) {
    const c = config;
    const remote = underBase(c.base_path, target.path, input.filename);
    const folder = path.posix.dirname(remote);
    // Beside the target, so the rename stays on one file system; named after the delivery, so a
    // retry overwrites its own leftover instead of adding another.
    const temporary = path.posix.join(folder, `.${path.posix.basename(remote)}.${input.deliveryId}.part`);
    const where = sftpWhere(c, remote);
    const { size } = await stat(input.file);
    const sftp = await openSftp(c, ctx);
    try {
      await abortable(upload(), ctx.signal);
    } catch (error) {
      // A cancelled delivery has lost its connection with the signal; the retry overwrites its file.
      if (ctx.signal.aborted) throw cancelled(serverName(c), where);
      await sftp.client.delete(temporary, true).catch(() => undefined);
      throw sftpFailure(error, `${serverName(c)} (writing ${remote})`, where);
    } finally {
      await sftp.close();
    }
    return { target: { host: c.host, port: c.port, path: remote }, bytes_written: size };

    async function upload() {
      await requireBase(sftp, c);
      if ((await sftp.client.exists(folder)) !== 'd') await sftp.client.mkdir(folder, true);
      // fastPut keeps many writes in flight; a plain stream waits for each 32 KiB write and is
      // ten times slower (measured against OpenSSH on loopback: 20 MiB in 0.9 s against 10 s).
      let reported = 0;
      await sftp.client.fastPut(input.file, temporary, {
        mode: 0o644,
        step: (sent: number) => {
          if (sent - reported < PROGRESS_EVERY_BYTES) return;
          reported = sent;
          ctx.progress?.({ bytes: sent });
        },
      });
      try {
        // Atomic replace: readers see the old file or the new one.
        await sftp.client.posixRename(temporary, remote);
      } catch (error) {
        if (!unsupported(error)) throw error;
        // Servers without posix-rename (SFTP v3 rename refuses an existing target): remove, then
        // rename; for that moment the file is missing, but never half-written.
        if (await sftp.client.exists(remote)) await sftp.client.delete(remote);
        await sftp.client.rename(temporary, remote);
      }
    }
  },
} satisfies DestinationBehaviour<{ path: string }, SftpConfig>;

export const sftp = defineConnector(sftpDeclaration, {
  test,
  destination,
});
