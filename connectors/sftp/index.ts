import { z } from 'zod';
import { destinationNotImplemented, host, objectKey, port, secret, username } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const sftp: ConnectorDefinition = {
  type: 'sftp',
  label: 'SFTP server',
  description: 'Files written to a folder on an SSH server over SFTP.',
  configuration: z.strictObject({
    host,
    port: port(22),
    username,
    password: secret('Password'),
    private_key: secret('Private key (OpenSSH or PEM)'),
    passphrase: secret('Passphrase of the private key'),
    host_key_sha256: z.string().max(100).optional().describe('Expected host key fingerprint (SHA256:…); recommended'),
    base_path: z.string().max(1024).default('.').describe('Folder remote paths are relative to'),
  }),
  secrets: ['password', 'private_key', 'passphrase'],
  example: { host: 'sftp.example.org', port: 22, username: 'upload', private_key: '-----BEGIN OPENSSH PRIVATE KEY-----…', base_path: '/incoming' },
  implemented: false,
  verifiedAgainst: 'OpenSSH sshd (Debian) started by the tests',
  destination: destinationNotImplemented('sftp', z.strictObject({ path: objectKey('Remote file path (relative to base_path)') })),
};
