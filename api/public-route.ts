/*
 * A route anyone may call (the catalogues, logging in): no authentication, and no security
 * requirement in the OpenAPI document.
 */

/** A public route's options: `schema` with an empty security requirement, the auth hook told to let it through. */
export const publicRoute = <S extends object>(schema: S) => ({ config: { auth: { public: true as const } }, schema: { security: [], ...schema } });
