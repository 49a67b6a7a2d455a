import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sftp } from '../../connectors/sftp/index.js';
import { sshdUnavailable, startSshd, type Sshd } from '../servers/sshd/server.js';
import { closedPort, connectorContext, expectConnectorError, deliverInput } from './support.js';

describe.skipIf(sshdUnavailable())('sftp connector against OpenSSH sshd', () => {
  let server: Sshd;
  let withPassword: ReturnType<typeof sftp.configuration.parse>;
  let withKey: ReturnType<typeof sftp.configuration.parse>;

  beforeAll(async () => {
    server = await startSshd();
    withPassword = sftp.configuration.parse({
      host: server.host,
      port: server.port,
      username: server.passwordUser.username,
      password: server.passwordUser.password,
      base_path: server.passwordUser.home,
    });
    withKey = sftp.configuration.parse({
      host: server.host,
      port: server.port,
      username: server.keyUser.username,
      private_key: server.keyUser.privateKey,
      base_path: server.keyUser.home,
      host_key_sha256: server.hostKeySha256,
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const localFile = (name: string, bytes: Buffer) => {
    const ctx = connectorContext();
    const file = path.join(ctx.workDir, name);
    writeFileSync(file, bytes);
    return { ctx, file };
  };

  describe('test', () => {
    it('logs in with a password, a key and an encrypted key, and shows the host key', async () => {
      const byPassword = await sftp.test!(withPassword, connectorContext());
      expect(byPassword).toMatchObject({
        ok: true,
        status: 'ok',
        tried: { host: server.host, port: server.port, auth: 'password', host_key_sha256: server.hostKeySha256 },
      });
      expect(byPassword.message).toContain('was not checked');
      expect(await sftp.test!(withKey, connectorContext())).toMatchObject({ ok: true, tried: { auth: 'private_key' } });
      const encrypted = { ...withKey, private_key: server.keyUser.encryptedKey, passphrase: server.keyUser.passphrase };
      expect(await sftp.test!(encrypted, connectorContext())).toMatchObject({ ok: true });
      for (const result of [byPassword, await sftp.test!(encrypted, connectorContext())]) {
        const text = JSON.stringify(result);
        for (const secret of [server.passwordUser.password, server.keyUser.passphrase, 'PRIVATE KEY']) expect(text).not.toContain(secret);
      }
    });

    it('classifies wrong credentials, a wrong host key, a missing base_path and a closed port', async () => {
      const wrongPassword = await sftp.test!({ ...withPassword, password: 'wrong-password-9f8e7d' }, connectorContext());
      expect(wrongPassword).toMatchObject({ ok: false, status: 'authentication_failed' });
      expect(JSON.stringify(wrongPassword)).not.toContain('wrong-password-9f8e7d');
      // the key account accepts keys only
      expect(await sftp.test!({ ...withPassword, username: server.keyUser.username }, connectorContext())).toMatchObject({ status: 'authentication_failed' });
      const badPassphrase = await sftp.test!({ ...withKey, private_key: server.keyUser.encryptedKey, passphrase: 'not-it-1a2b3c' }, connectorContext());
      expect(badPassphrase).toMatchObject({ ok: false, status: 'authentication_failed' });
      expect(badPassphrase.message).toContain('private key cannot be read');
      expect(JSON.stringify(badPassphrase)).not.toContain('not-it-1a2b3c');

      const otherKey = `SHA256:${'A'.repeat(43)}`;
      const pinned = await sftp.test!({ ...withKey, host_key_sha256: otherKey }, connectorContext());
      expect(pinned).toMatchObject({ ok: false, status: 'tls_error', tried: { host_key_sha256: server.hostKeySha256 } });
      expect(pinned.message).toContain(otherKey);

      const missing = await sftp.test!({ ...withPassword, base_path: `${server.passwordUser.home}/nothing` }, connectorContext());
      expect(missing).toMatchObject({ ok: false, status: 'not_found' });
      expect(await sftp.test!({ ...withPassword, port: await closedPort() }, connectorContext())).toMatchObject({ ok: false, status: 'unreachable' });
    });

    it('accepts its documented example; refuses a malformed fingerprint and absolute or climbing targets', () => {
      expect(sftp.configuration.safeParse(sftp.example).success).toBe(true);
      expect(sftp.configuration.safeParse({ host: 'h', username: 'u', host_key_sha256: 'MD5:aa:bb' }).success).toBe(false);
      expect(sftp.destination!.target.safeParse({ path: '/etc/passwd' }).success).toBe(false);
      expect(sftp.destination!.target.safeParse({ path: 'a/../../b' }).success).toBe(false);
    });
  });

  describe('deliver', () => {
    it('writes the file under base_path, creating folders, with nothing temporary left', async () => {
      const bytes = randomBytes(200_000);
      const { ctx, file } = localFile('parcels.gpkg', bytes);
      const result = await sftp.destination!.deliver(withKey, { path: 'daily/2026/' }, deliverInput(file, 'dl_a'), ctx);
      const remote = path.join(server.keyUser.home, 'daily/2026/parcels.gpkg');
      expect(result).toEqual({ target: { host: server.host, port: server.port, path: remote }, bytes_written: bytes.length });
      expect(readFileSync(remote).equals(bytes)).toBe(true);
      expect(readdirSync(path.dirname(remote))).toEqual(['parcels.gpkg']);

      // the same delivery again, then another one: one file, the last content
      await sftp.destination!.deliver(withKey, { path: 'daily/2026/parcels.gpkg' }, deliverInput(file, 'dl_a'), ctx);
      const next = randomBytes(1000);
      writeFileSync(file, next);
      await sftp.destination!.deliver(withKey, { path: 'daily/2026/parcels.gpkg' }, deliverInput(file, 'dl_b'), ctx);
      expect(readFileSync(remote).equals(next)).toBe(true);
      expect(readdirSync(path.dirname(remote))).toEqual(['parcels.gpkg']);
    });

    it('replaces the target in one step: a reader sees the old file or the new one, never part of one', async () => {
      const remote = path.join(server.passwordUser.home, 'live.bin');
      const old = randomBytes(4 * 1024 * 1024);
      const { ctx, file } = localFile('live.bin', old);
      await sftp.destination!.deliver(withPassword, { path: 'live.bin' }, deliverInput(file, 'dl_old'), ctx);
      const fresh = randomBytes(4 * 1024 * 1024);
      writeFileSync(file, fresh);
      let reading = true;
      const seen = { old: 0, fresh: 0, other: 0 };
      const reader = (async () => {
        while (reading) {
          const now = readFileSync(remote);
          if (now.equals(old)) seen.old++;
          else if (now.equals(fresh)) seen.fresh++;
          else seen.other++;
          await new Promise((r) => setImmediate(r)); // lets the delivery run between reads
        }
      })();
      await sftp.destination!.deliver(withPassword, { path: 'live.bin' }, deliverInput(file, 'dl_fresh'), ctx);
      reading = false;
      await reader;
      expect(seen.other).toBe(0);
      expect(seen.old).toBeGreaterThan(0);
      expect(readFileSync(remote).equals(fresh)).toBe(true);
    });

    it('classifies a refused write and cleans up after a failed rename', async () => {
      const { ctx, file } = localFile('x.gpkg', randomBytes(100));
      const denied = await expectConnectorError(
        sftp.destination!.deliver({ ...withPassword, base_path: '/' }, { path: 'x.gpkg' }, deliverInput(file, 'dl_c'), ctx),
        'permission_denied',
      );
      expect(denied).toMatchObject({ reason: 'permission_denied', retryable: false, details: { host: server.host, path: '/x.gpkg' } });
      expect(existsSync('/x.gpkg')).toBe(false);

      // a folder where the file should go: the rename fails, the temporary file goes away
      mkdirSync(path.join(server.passwordUser.home, 'taken', 'x.gpkg'), { recursive: true });
      const taken = await expectConnectorError(
        sftp.destination!.deliver(withPassword, { path: 'taken/x.gpkg' }, deliverInput(file, 'dl_d'), ctx),
        'permission_denied',
      );
      expect(taken.retryable).toBe(false);
      expect(readdirSync(path.join(server.passwordUser.home, 'taken'))).toEqual(['x.gpkg']);
    });

    it('stops when its signal aborts, and the retry of that delivery leaves one file', async () => {
      const bytes = randomBytes(10 * 1024 * 1024);
      const { ctx, file } = localFile('big.gpkg', bytes);
      const abort = new AbortController();
      const stopped = await expectConnectorError(
        sftp.destination!.deliver(withKey, { path: 'cancel/' }, deliverInput(file, 'dl_cancel'), {
          ...ctx,
          signal: abort.signal,
          progress: () => abort.abort(),
        }),
        'timeout',
      );
      expect(stopped).toMatchObject({ reason: 'timeout', retryable: true });
      expect(existsSync(path.join(server.keyUser.home, 'cancel/big.gpkg'))).toBe(false);
      await sftp.destination!.deliver(withKey, { path: 'cancel/' }, deliverInput(file, 'dl_cancel'), ctx);
      expect(readdirSync(path.join(server.keyUser.home, 'cancel'))).toEqual(['big.gpkg']);
      expect(readFileSync(path.join(server.keyUser.home, 'cancel/big.gpkg')).equals(bytes)).toBe(true);
    });

    it('answers not_found for a missing base_path instead of creating it', async () => {
      const { ctx, file } = localFile('x.gpkg', randomBytes(100));
      const base = path.join(server.passwordUser.home, 'not-made');
      await expectConnectorError(
        sftp.destination!.deliver({ ...withPassword, base_path: base }, { path: 'x.gpkg' }, deliverInput(file, 'dl_e'), ctx),
        'not_found',
      );
      expect(existsSync(base)).toBe(false);
    });
  });
});
