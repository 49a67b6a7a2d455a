import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/*
 * The vendors' clients of the map stand-ins (geoserver-rest for GeoServer, geonodectl for GeoNode),
 * in the venv install.sh makes: each stand-in's check-client.py drives its client against it.
 */

const python = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools', 'map-clients', 'bin', 'python');

/** Why `client` cannot run (for skipIf), or false. */
export const mapClientMissing = (client: string) => !existsSync(python) && `the ${client} client is not installed (test/servers/geoserver/install.sh)`;

/**
 * Runs test/servers/<standIn>/check-client.py with `args` and answers the JSON it printed. It runs
 * asynchronously: the stand-in answers from this very process.
 */
export async function checkWithClient(standIn: 'geoserver' | 'geonode', args: string[]): Promise<ReturnType<typeof JSON.parse>> {
  const ran = await promisify(execFile)(python, [path.resolve(`test/servers/${standIn}/check-client.py`), ...args], { encoding: 'utf8', timeout: 120_000 });
  return JSON.parse(ran.stdout);
}
