import type { z } from 'zod';
import { changedSince, downloadIfChanged, publicUrl } from '../shared/http/download.js';
import { testHttp } from '../shared/http/http-test.js';
import { type configuration, urlDeclaration } from './declaration.js';
import { defineConnector, type SourceBehaviour } from '../types.js';

type UrlConfig = z.output<typeof configuration>;

/** A url Source remembers the validators (ETag, Last-Modified) of the file it last read. */
const source = {
  extract: (config, _resource, ctx, options) => downloadIfChanged({ url: config.url }, ctx, options.sync),
  changeCheck: {
    changed: (config, _resource, ctx, sync) => changedSince({ url: config.url }, ctx, sync),
  },
} satisfies SourceBehaviour<Record<string, never>, UrlConfig>;

/** A file at a public URL: the simplest Source, and the reference for the others. */
export const url = defineConnector(urlDeclaration, {
  async test(config, ctx) {
    return testHttp({ url: config.url }, ctx, { url: publicUrl(config.url) });
  },
  source,
});
