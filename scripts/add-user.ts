import '../platform/runtime-notices.js';
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline/promises';
import { registerUser } from '../application/accounts.js';
import { createServices } from '../application/bootstrap.js';
import { loadConfig } from '../platform/config.js';

/**
 * `npm run users:add -- --email ana@example.com [--name "Ana"]`: adds a user to the local user
 * database. The password is read from SVC_NEW_USER_PASSWORD or asked for (never a flag, so it
 * stays out of shell history).
 */
const { values } = parseArgs({ options: { email: { type: 'string' }, name: { type: 'string' } } });
if (!values.email) {
  console.error('usage: npm run users:add -- --email ADDRESS [--name NAME]   (password from SVC_NEW_USER_PASSWORD or a prompt)');
  process.exit(2);
}
let password = process.env.SVC_NEW_USER_PASSWORD;
if (!password) {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  password = await rl.question('Password (10+ characters): ');
  rl.close();
}
const services = await createServices(loadConfig(), { temporal: false });
try {
  const user = await registerUser(services, { email: values.email, name: values.name, password });
  console.log(`created ${user.email} (${user.id})`);
} catch (error) {
  console.error(`could not add the user: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await services.close();
}
