// Koop ships no type declarations: the little the test server uses.
declare module '@koopjs/koop-core' {
  import type { Express } from 'express';
  export default class Koop {
    constructor(options?: { logLevel?: string; logger?: unknown });
    server: Express;
    version: string;
    register(plugin: unknown, options?: Record<string, unknown>): void;
  }
}
declare module '@koopjs/provider-file-geojson' {
  const provider: unknown;
  export default provider;
}
