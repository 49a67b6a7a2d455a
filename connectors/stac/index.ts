import path from 'node:path';
import type { z } from 'zod';
import { changedSince, downloadIfChanged, extensionForMediaType } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { testSteps } from '../shared/http/http-test.js';
import { chooseAsset, StacReader, type StacDocument } from './catalog.js';
import { type configuration, type resource, stacDeclaration } from './declaration.js';
import { defineConnector, type ConnectorContext, type SourceBehaviour } from '../types.js';

type StacConfig = z.output<typeof configuration>;

type StacResource = z.infer<typeof resource>;

/** The downloaded file's name: the href's last segment, with an extension from the asset's media type when it has none. */
function assetFilename(href: string, key: string, type: string | undefined): string {
  let name = path.posix.basename(new URL(href).pathname);
  try {
    name = decodeURIComponent(name);
  } catch {
    // keep it as it is
  }
  if (!name) name = key;
  const extension = path.extname(name) ? null : extensionForMediaType(type);
  return extension ? `${name}.${extension}` : name;
}

/** An incremental read remembers the asset's address (href) and its validators. */
const source = {
  async extract(config, selector, ctx, options) {
    const { reader, key, href, asset } = await locate(config, selector, ctx);
    return downloadIfChanged({ url: href, headers: reader.headersFor(href), filename: assetFilename(href, key, asset.type) }, ctx, options.sync, { href });
  },
  changeCheck: {
    async changed(config, selector, ctx, sync) {
      const { reader, href } = await locate(config, selector, ctx);
      return changedSince({ url: href, headers: reader.headersFor(href) }, ctx, sync, { href });
    },
  },
} satisfies SourceBehaviour<StacResource, StacConfig>;

/** The asset a selector names: the item (found through the catalog or the API) and its chosen asset. */
async function locate(c: StacConfig, selector: StacResource, ctx: ConnectorContext) {
  const reader = new StacReader(c.url, c.token, ctx);
  const root = await reader.read<StacDocument>(c.url);
  const item = await reader.findItem(root, selector.item, selector.collection);
  return { reader, ...chooseAsset(item, selector.asset) };
}

export const stac = defineConnector(stacDeclaration, {
  async test(config, ctx) {
    const c = config;
    const label = publicUrl(c.url);
    return testSteps({ url: label, token: Boolean(c.token) }, label, async () => {
      const root = await new StacReader(c.url, c.token, ctx).read<StacDocument>(c.url);
      const api = StacReader.isApi(root.doc);
      if (!root.doc || (typeof root.doc.stac_version !== 'string' && !api)) {
        throw new ConnectorError('invalid_response', `${label} answered JSON that is not a STAC catalog, collection or API`, {}, false);
      }
      return `${label} is a STAC ${api ? 'API' : (root.doc.type ?? 'catalog')} (${root.doc.id ?? 'no id'}, STAC ${root.doc.stac_version ?? '?'})`;
    });
  },
  source,
});
