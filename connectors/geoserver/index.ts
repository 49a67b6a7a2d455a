import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { testSteps } from '../shared/http/http-test.js';
import { publishLayer, type GeoserverTarget } from './publish.js';
import { accessOf, restGet, wrapped } from './rest.js';
import { readLayer, wfsCapabilities } from './wfs.js';
import { type configuration, type resource, type target, geoserverDeclaration } from './declaration.js';
import { defineConnector, type DestinationBehaviour, type SourceBehaviour } from '../types.js';

type GeoserverConfig = z.infer<typeof configuration>;

type GeoserverResource = z.infer<typeof resource>;

/** The workspace a selector or target means: its own, else the connection's; none is a clear refusal. */
function workspaceOf(config: GeoserverConfig, given: string | undefined, what: string): string {
  const workspace = given ?? config.workspace;
  if (!workspace) throw new ConnectorError('not_found', `${what} names no workspace and the connection has no default workspace`, {}, false);
  return workspace;
}

function splitLayer(config: GeoserverConfig, layer: string): { workspace: string; layer: string } {
  const [a, b] = layer.split(':');
  return b ? { workspace: a!, layer: b } : { workspace: workspaceOf(config, undefined, `Layer ${layer}`), layer: a! };
}

const source = {
  async extract(config, selector, ctx) {
    const { workspace, layer } = splitLayer(config, selector.layer);
    const filename = safeFilename(`${layer}.geojson`);
    const file = path.join(ctx.workDir, filename);
    try {
      const read = await readLayer(
        accessOf(config),
        { workspace, layer, bbox: selector.bbox, bboxCrs: selector.bbox_crs, cqlFilter: selector.cql_filter, pageSize: selector.page_size },
        file,
        ctx,
      );
      return { file, filename, bytes: (await stat(file)).size, features: read.features };
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
  },
} satisfies SourceBehaviour<GeoserverResource, GeoserverConfig>;

const destination = {
  deliver(config, t, input, ctx) {
    return publishLayer(accessOf(config), workspaceOf(config, t.workspace, 'destination_target'), t as GeoserverTarget, input, ctx);
  },
} satisfies DestinationBehaviour<z.infer<typeof target>, GeoserverConfig>;

export const geoserver = defineConnector(geoserverDeclaration, {
  test(c, ctx) {
    const access = accessOf(c);
    return testSteps({ url: publicUrl(c.url), username: c.username ?? null, workspace: c.workspace ?? null }, publicUrl(c.url), async () => {
      if (c.username) {
        const body = await restGet<unknown>(access, ['about', 'version.json'], ctx);
        if (body === null)
          throw new ConnectorError(
            'not_found',
            `${publicUrl(c.url)}/rest/about/version answered 404: is the URL the GeoServer web application (…/geoserver)?`,
            { url: publicUrl(c.url) },
            false,
          );
        const resources =
          wrapped<{ resource?: { '@name'?: string; Version?: string }[] }>(body, 'about', `${publicUrl(c.url)}/rest/about/version`).resource ?? [];
        const version = resources.find((r) => r['@name'] === 'GeoServer')?.Version;
        if (c.workspace && !(await restGet(access, ['workspaces', `${c.workspace}.json`], ctx))) {
          throw new ConnectorError(
            'not_found',
            `GeoServer ${version ?? ''} at ${publicUrl(c.url)} has no workspace ${c.workspace}`.replace('  ', ' '),
            { workspace: c.workspace },
            false,
          );
        }
        return `GeoServer ${version ?? '(version not reported)'} at ${publicUrl(c.url)} accepted ${c.username}`;
      }
      const layers = await wfsCapabilities(access, ctx);
      return `The WFS of ${publicUrl(c.url)} answered its capabilities (${layers} layer(s))`;
    });
  },
  source,
  destination,
});
