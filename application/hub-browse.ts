import { browseFolders, browseItems, browseLayers } from '../connectors/hub/browse.js';
import { hubConfiguration } from '../connectors/hub/declaration.js';
import type { HubConfig } from '../connectors/hub/portal.js';
import { ConnectorError } from '../domain/transfers.js';
import type { ConnectorContext } from '../connectors/types.js';
import { kindNoun, type ConnectionKind } from '../domain/connections/kinds.js';
import { DomainError } from '../domain/errors.js';
import { openConnection, withDeadline } from './connections.js';
import { transferError } from './transfers.js';
import type { Services } from './services.js';

/*
 * The hub browse helpers (/sources/{id}/hub/…, /destinations/{id}/hub/…): a saved hub
 * connection the actor owns is opened (decrypted here, in the API process) and asked for its
 * portal's items, the user's folders, or an item's layers. Another user's connection is not
 * found, as on every connection route.
 */

const BROWSE_TIMEOUT_MS = 30_000;

type Browser = Pick<Services, 'store' | 'cipher' | 'config'>;
interface Asked {
  kind: ConnectionKind;
  id: string;
  actorId: string;
  log: ConnectorContext['log'];
}

/** Opens the actor's hub connection and runs one browse call with a deadline; remote failures as source_failed / delivery_failed. */
async function withHub<T>(services: Browser, asked: Asked, call: (config: HubConfig, ctx: ConnectorContext) => Promise<T>): Promise<T> {
  const { kind } = asked;
  const connection = await openConnection(services, kind, asked.id, asked.actorId);
  if (connection.type !== 'hub') {
    throw new DomainError(
      kind === 'source' ? 'invalid_source' : 'invalid_destination',
      `The hub browse helpers work on hub ${kindNoun(kind)}s only; this one is ${connection.type}`,
      { type: connection.type },
    );
  }
  const config = hubConfiguration.parse(connection.config);
  try {
    return await withDeadline(BROWSE_TIMEOUT_MS, { log: asked.log, workDir: services.config.dataDir, maxBytes: services.config.maxUploadBytes }, (ctx) =>
      call(config, ctx),
    );
  } catch (error) {
    if (error instanceof ConnectorError) throw transferError(error, kind === 'source' ? 'import' : 'deliver');
    throw error;
  }
}

export const hubItems = (services: Browser, asked: Asked, query: Parameters<typeof browseItems>[1]) =>
  withHub(services, asked, (config, ctx) => browseItems(config, query, ctx));
export const hubFolders = (services: Browser, asked: Asked) => withHub(services, asked, (config, ctx) => browseFolders(config, ctx));
export const hubLayers = (services: Browser, asked: Asked, itemId: string) => withHub(services, asked, (config, ctx) => browseLayers(config, itemId, ctx));
