import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

/*
 * A route anyone may call (the catalogues, logging in): no authentication, and no security
 * requirement in the OpenAPI document.
 */

/** A public route's options: `schema` with an empty security requirement, the auth hook told to let it through. */
export const publicRoute = <S extends object>(schema: S) => ({ config: { auth: { public: true as const } }, schema: { security: [], ...schema } });

/** GET `path`: a catalogue that never changes while the server runs (`items`, worked out once), public like the others. */
export function publicCatalog<S extends z.ZodType>(path: string, summary: string, item: S, items: z.input<S>[]): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(path, publicRoute({ tags: ['Catalogs'], summary, response: { 200: z.object({ items: z.array(item) }) } }), async () => ({ items }));
  };
}
