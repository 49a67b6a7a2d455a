import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from '../../../devservers/ports.js';
import { stopProcess, tail } from '../../../devservers/processes.js';

/*
 * OpenSSH's sshd on a free loopback port, with its own host key, configuration and files in a
 * temporary folder: an account that logs in with a password and one that logs in with a key
 * (accounts made by install.sh; their password is random, made on the first start). Only
 * SFTP is served (ForceCommand internal-sftp).
 */

const SSHD = '/usr/sbin/sshd';
export const PASSWORD_USER = 'geoflow-sftp-pw';
export const KEY_USER = 'geoflow-sftp-key';

export interface Sshd {
  host: string;
  port: number;
  /** SHA256:… of the host key, as `ssh-keygen -l -E sha256` prints it. */
  hostKeySha256: string;
  passwordUser: { username: string; password: string; home: string };
  keyUser: { username: string; privateKey: string; encryptedKey: string; passphrase: string; home: string };
  stop(): Promise<void>;
}

const uidOf = (user: string) => spawnSync('id', ['-u', user], { encoding: 'utf8' });

/** Why sshd cannot run here, or false when it can. */
export function sshdUnavailable(): string | false {
  if (!existsSync(SSHD)) return 'OpenSSH sshd is not installed: test/servers/sshd/install.sh (run by `npm test`) installs it';
  if (process.getuid?.() !== 0) return 'the sshd test server needs root (it sets the passwords of its test accounts)';
  for (const user of [PASSWORD_USER, KEY_USER]) {
    if (uidOf(user).status !== 0) return `the account ${user} is missing: run test/servers/sshd/install.sh`;
  }
  return false;
}

/**
 * The password of the test accounts: random, made once per machine and kept for root only, so
 * suites that run at the same time (each with its own sshd) set the same one.
 */
function accountPassword(): string {
  const file = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools', 'sshd-test-password');
  mkdirSync(path.dirname(file), { recursive: true });
  if (!existsSync(file)) {
    // written whole under another name, then linked: a suite starting alongside never reads half
    const draft = `${file}.${process.pid}`;
    writeFileSync(draft, randomBytes(18).toString('base64url'), { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(draft, { force: true });
    }
  }
  return readFileSync(file, 'utf8').trim();
}

function run(cmd: string, args: string[], input?: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input });
  if (r.status !== 0) throw new Error(`${cmd} ${args[0] ?? ''} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

function keyPair(file: string, passphrase = ''): string {
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'geoflow-test', '-f', file]);
  return readFileSync(file, 'utf8');
}

/** A folder the account owns, for its files. */
function homeFor(dir: string, user: string): string {
  const home = path.join(dir, 'files', user);
  mkdirSync(home, { recursive: true });
  chownSync(home, Number(uidOf(user).stdout.trim()), Number(run('id', ['-g', user]).trim()));
  return home;
}

export async function startSshd(): Promise<Sshd> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sshd-'));
  chmodSync(dir, 0o755); // the accounts must reach their folders inside
  const hostKey = path.join(dir, 'host_ed25519');
  keyPair(hostKey);
  const hostKeySha256 = run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${hostKey}.pub`]).split(' ')[1]!;

  const password = accountPassword();
  const passphrase = randomBytes(12).toString('base64url');
  // The key account gets a password too (never used: it may log in with keys only), since an
  // account without one counts as locked.
  run('chpasswd', [], `${PASSWORD_USER}:${password}\n${KEY_USER}:${password}\n`);
  const privateKey = keyPair(path.join(dir, 'client_ed25519'));
  const encryptedKey = keyPair(path.join(dir, 'client_encrypted'), passphrase);
  mkdirSync(path.join(dir, 'authorized_keys'));
  writeFileSync(
    path.join(dir, 'authorized_keys', KEY_USER),
    readFileSync(path.join(dir, 'client_ed25519.pub'), 'utf8') + readFileSync(path.join(dir, 'client_encrypted.pub'), 'utf8'),
  );

  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys', '%u')}`,
      // the folder lives under /tmp (world-writable), which strict modes would refuse
      'StrictModes no',
      'UsePAM no',
      'PermitRootLogin no',
      'KbdInteractiveAuthentication no',
      'PasswordAuthentication yes',
      'PubkeyAuthentication yes',
      'MaxAuthTries 3',
      `AllowUsers ${PASSWORD_USER} ${KEY_USER}`,
      'Subsystem sftp internal-sftp',
      'ForceCommand internal-sftp',
      'AllowTcpForwarding no',
      'X11Forwarding no',
      `Match User ${PASSWORD_USER}`,
      '  AuthenticationMethods password',
      `Match User ${KEY_USER}`,
      '  AuthenticationMethods publickey',
      '',
    ].join('\n'),
  );
  // sshd's unprivileged children chroot into this folder; Debian creates it only at boot.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  run(SSHD, ['-t', '-f', config]);

  const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  const log = tail(child);
  try {
    await waitForPort(port, '127.0.0.1', 15_000);
  } catch (error) {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`sshd did not start: ${(error as Error).message}\n${log()}`);
  }
  return {
    host: '127.0.0.1',
    port,
    hostKeySha256,
    passwordUser: { username: PASSWORD_USER, password, home: homeFor(dir, PASSWORD_USER) },
    keyUser: { username: KEY_USER, privateKey, encryptedKey, passphrase, home: homeFor(dir, KEY_USER) },
    async stop() {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
