import type { z } from 'zod';
import { ConnectorError } from '../../domain/transfers.js';
import { testSteps } from '../shared/http/http-test.js';
import { deliverHub, type HubTarget } from './deliver.js';
import { extractHub, hubChanged, type HubResource } from './extract.js';
import { openPortal, portalCall } from './portal.js';
import { type hubConfiguration, hubDeclaration } from './declaration.js';
import { defineConnector, type DestinationBehaviour, type SourceBehaviour } from '../types.js';

type HubConfigParsed = z.output<typeof hubConfiguration>;

const source = {
  extract: (config, selector, ctx, options) => extractHub(config, selector, ctx, options),
  changeCheck: {
    changed: (config, selector, ctx, sync) => hubChanged(config, selector, ctx, sync?.cursor),
  },
} satisfies SourceBehaviour<HubResource, HubConfigParsed>;

const destination = {
  deliver: (config, t, input, ctx) => deliverHub(config, t, input, ctx),
} satisfies DestinationBehaviour<HubTarget, HubConfigParsed>;

export const hub = defineConnector(hubDeclaration, {
  test(config, ctx) {
    const label = (() => {
      try {
        return new URL(config.url).origin + new URL(config.url).pathname.replace(/\/+$/, '');
      } catch {
        return config.url;
      }
    })();
    return testSteps({ url: label, username: config.username ?? null, api_key: Boolean(config.api_key) }, label, async () => {
      const portal = await openPortal(config, ctx);
      const { json } = await portalCall<{ name?: string; isPortal?: boolean; user?: { username?: string } }>(portal, 'portals/self', {}, ctx);
      if (!json || typeof json !== 'object' || (json.name === undefined && json.isPortal === undefined)) {
        throw new ConnectorError(
          'invalid_response',
          `${portal.label} answered portals/self without a portal: is it an ArcGIS portal?`,
          { url: portal.label },
          false,
        );
      }
      // A generated token always belongs to a user; an API key need not (a wrong one is error 498 above).
      if (portal.token && !config.api_key && !json.user?.username) {
        throw new ConnectorError(
          'authentication_failed',
          `${portal.label} did not accept the credentials (portals/self names no user)`,
          { url: portal.label },
          false,
        );
      }
      const who = json.user?.username ? `, signed in as ${json.user.username}` : config.api_key ? ', with an API key' : ', anonymous: public items only';
      return `${portal.label} is ${json.isPortal ? 'ArcGIS Enterprise' : 'ArcGIS Online'} (${json.name ?? 'unnamed'})${who}`;
    });
  },
  source,
  destination,
});
