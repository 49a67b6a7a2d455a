import { z } from 'zod';
import { host, port, secret, username } from '../shared/fields.js';
import { relativeKey } from '../shared/files/remote-paths.js';
import { declareConnector } from '../types.js';

const configuration = z.strictObject({
  host,
  port: port(22),
  username,
  password: secret('Password'),
  private_key: secret('Private key (OpenSSH or PEM)'),
  passphrase: secret('Passphrase of the private key'),
  host_key_sha256: z
    .string()
    .regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'a host key fingerprint as ssh-keygen -l prints it: SHA256: and 43 base64 characters')
    .optional()
    .describe(
      'Expected host key fingerprint (SHA256:…, as `ssh-keygen -l -E sha256` prints it); recommended: the connection test shows the one the server presents',
    ),
  base_path: z.string().min(1).max(1024).default('.').describe('Folder remote paths are relative to (relative to the login folder unless it starts with /)'),
});

/** What the registry knows of sftp without loading its behaviour (index.ts) or its SDK. */
export const sftpDeclaration = declareConnector({
  type: 'sftp',
  label: 'SFTP server',
  description: 'Files written to a folder on an SSH server over SFTP.',
  configuration,
  secrets: ['password', 'private_key', 'passphrase'],
  example: {
    host: 'sftp.example.org',
    port: 22,
    username: 'upload',
    private_key: '-----BEGIN OPENSSH PRIVATE KEY-----…',
    host_key_sha256: 'SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU',
    base_path: '/incoming',
  },
  implemented: true,
  verifiedAgainst: 'real server in npm test: OpenSSH 9.2 sshd (Debian) started by the tests, with a password account and a key account',
  destination: {
    target: z.strictObject({ path: relativeKey('Remote file path, relative to base_path; ending in "/" it names a folder and the output keeps its filename') }),
    deliverable: true,
  },
});
