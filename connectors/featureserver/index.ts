import type { z } from 'zod';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { testSteps } from '../shared/http/http-test.js';
import { readLayer } from '../shared/arcgis/read-layer.js';
import { arcgis, type RestAccess } from '../shared/arcgis/rest.js';
import { type configuration, type resource, featureserverDeclaration } from './declaration.js';
import { defineConnector, type SourceBehaviour } from '../types.js';

type FeatureServerConfig = z.output<typeof configuration>;

type FeatureServerResource = z.infer<typeof resource>;

function accessOf(config: FeatureServerConfig): RestAccess {
  const url = new URL(config.url);
  return { service: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, ...(config.token ? { token: config.token } : {}) };
}

const source = {
  async extract(config, selector, ctx) {
    const read = await readLayer(accessOf(config), selector.layer, selector.where, ctx);
    return { file: read.file, filename: read.filename, bytes: read.bytes, features: read.features };
  },
} satisfies SourceBehaviour<FeatureServerResource, FeatureServerConfig>;

export const featureserver = defineConnector(featureserverDeclaration, {
  async test(config, ctx) {
    const c = config;
    const access = accessOf(c);
    const label = publicUrl(access.service);
    return testSteps({ url: label, token: Boolean(c.token) }, label, async () => {
      const { json } = await arcgis<{ layers?: unknown[]; tables?: unknown[] }>(access, '', {}, ctx, 16 * 1024 * 1024);
      if (!Array.isArray(json?.layers) && !Array.isArray(json?.tables)) {
        throw new ConnectorError('invalid_response', `${label} answered JSON without layers or tables: is it a FeatureServer or MapServer?`, {}, false);
      }
      return `${label} has ${json.layers?.length ?? 0} layer(s) and ${json.tables?.length ?? 0} table(s)`;
    });
  },
  source,
});
