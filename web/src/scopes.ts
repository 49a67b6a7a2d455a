import { scopes } from '../../domain/accounts/scopes.js';

/** The V1 scopes and what they grant (the spec's Scopes table), from the same list the server checks. */
export const SCOPES: { id: string; grants: string }[] = Object.entries(scopes).map(([id, grants]) => ({ id, grants }));
