import type { ConnectorDeclaration, ConnectorDefinition, SourceDeclaration, SourceSupport } from './types.js';

/** The behaviour modules loaded (or loading) so far, by type. */
const loading = new Map<string, Promise<ConnectorDefinition>>();
const loaders = new Map<string, () => Promise<ConnectorDefinition>>();

/**
 * A connection type's whole definition before its behaviour is loaded: the declaration's fields as
 * they are, and each behaviour method (test, discover, projects, extract, the change check,
 * deliver) a stand-in that imports the type's behaviour module on its first call and hands over to
 * it. Importing the registry so costs no vendor SDK: the API serves its catalogue, OpenAPI and
 * forms from declarations, and a worker loads only the SDKs of the types its Runs use. A module
 * that failed to load is tried again on the next call (Node caches a module that threw, so the
 * same error comes back until the process restarts; nothing is left half-loaded).
 */
export function lazyConnector(declared: ConnectorDeclaration, load: () => Promise<ConnectorDefinition>): ConnectorDefinition {
  const type = declared.type;
  const full = (): Promise<ConnectorDefinition> => {
    let pending = loading.get(type);
    if (!pending) {
      pending = load().then((definition) => requireMatches(declared, definition));
      pending.catch(() => loading.delete(type));
      loading.set(type, pending);
    }
    return pending;
  };
  loaders.set(type, full);
  const { source, destination, ...fields } = declared;
  const sourceSupport = (s: SourceDeclaration): SourceSupport => {
    const { changeCheck, ...parts } = s;
    return {
      ...parts,
      extract: async (config, resource, ctx, options) => (await full()).source!.extract(config, resource, ctx, options),
      ...(changeCheck
        ? {
            changeCheck: {
              ...changeCheck,
              changed: async (config, resource, ctx, sync) => (await full()).source!.changeCheck!.changed(config, resource, ctx, sync),
            },
          }
        : {}),
    };
  };
  return {
    ...fields,
    test: async (config, ctx) => (await full()).test(config, ctx),
    ...(declared.discovers ? { discover: async (config, query, ctx) => (await full()).discover!(config, query, ctx) } : {}),
    ...(declared.browsesProjects
      ? {
          projects: {
            list: async (config, ctx) => (await full()).projects!.list(config, ctx),
            inspect: async (config, query, ctx) => (await full()).projects!.inspect(config, query, ctx),
          },
        }
      : {}),
    ...(source ? { source: sourceSupport(source) } : {}),
    ...(destination
      ? { destination: { ...destination, deliver: async (config, target, input, ctx) => (await full()).destination!.deliver(config, target, input, ctx) } }
      : {}),
    // Only a loaded behaviour can hold idle connections: closing never loads one.
    closeIdle: async () => {
      const loaded = await loading.get(type)?.catch(() => undefined);
      await loaded?.closeIdle?.();
    },
  };
}

/** Loads a type's behaviour (and its SDK) now, as its first use would; undefined for an unknown type. */
export function loadConnector(type: string): Promise<ConnectorDefinition> | undefined {
  return loaders.get(type)?.();
}

/** The types whose behaviour has been asked for so far (a worker's shutdown closes only these; the unit spec checks it). */
export const loadedTypes = (): string[] => [...loading.keys()];

/**
 * The behaviour module must be built from this very declaration (defineConnector(declaration, …)),
 * and have what it declares: the types say so at compile time, this says so for a module that was
 * not type-checked.
 */
function requireMatches(declared: ConnectorDeclaration, definition: ConnectorDefinition): ConnectorDefinition {
  const mismatch = [
    definition.configuration !== declared.configuration && 'it is not built from the declaration',
    Boolean(definition.discover) !== Boolean(declared.discovers) && 'discover',
    Boolean(definition.projects) !== Boolean(declared.browsesProjects) && 'projects',
    Boolean(definition.source?.extract) !== Boolean(declared.source) && 'source.extract',
    Boolean(definition.source?.changeCheck?.changed) !== Boolean(declared.source?.changeCheck) && 'source.changeCheck.changed',
    Boolean(definition.destination?.deliver) !== Boolean(declared.destination) && 'destination.deliver',
  ].filter(Boolean);
  if (mismatch.length) throw new Error(`The ${declared.type} connector module does not match its declaration: ${mismatch.join(', ')}`);
  return definition;
}
