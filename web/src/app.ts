/**
 * What every page shares: who is logged in, the catalogs (fetched once), a one-shot message
 * carried to the next page, and navigation.
 */
import { get } from './api.js';
import type { Connector, Format, Me, System, Transformation } from './types.js';

export interface App {
  session: Me | null;
  /** GET /api/v1/transformations, fetched once per page load. */
  transformations(): Promise<Transformation[]>;
  /** GET /api/v1/formats, fetched once per page load. */
  formats(): Promise<Format[]>;
  /** GET /api/v1/connectors: every connection type with its JSON Schemas, fetched once. */
  connectors(): Promise<Connector[]>;
  /** GET /api/v1/system, fetched once (feature flags, the Temporal UI address). */
  system(): Promise<System>;
  /** Shows a message on the next page (after a redirect). */
  flash(message: string): void;
  takeFlash(): string | null;
  navigate(hash: string): void;
  refreshSession(): Promise<Me | null>;
}

export function createApp(): App {
  let transformations: Promise<Transformation[]> | null = null;
  let formats: Promise<Format[]> | null = null;
  let connectors: Promise<Connector[]> | null = null;
  let system: Promise<System> | null = null;
  let flash: string | null = null;
  const app: App = {
    session: null,
    transformations() {
      transformations ??= get<{ items: Transformation[] }>('/transformations').then((r) => r.items);
      transformations.catch(() => (transformations = null));
      return transformations;
    },
    formats() {
      formats ??= get<{ items: Format[] }>('/formats').then((r) => r.items);
      formats.catch(() => (formats = null));
      return formats;
    },
    connectors() {
      connectors ??= get<{ items: Connector[] }>('/connectors').then((r) => r.items);
      connectors.catch(() => (connectors = null));
      return connectors;
    },
    system() {
      system ??= get<System>('/system');
      system.catch(() => (system = null));
      return system;
    },
    flash(message) {
      flash = message;
    },
    takeFlash() {
      const m = flash;
      flash = null;
      return m;
    },
    navigate(hash) {
      if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = hash;
    },
    async refreshSession() {
      try {
        app.session = await get<Me>('/auth/me', { quiet401: true });
      } catch (error) {
        if ((error as { status?: number }).status === 401) app.session = null;
        else throw error;
      }
      return app.session;
    },
  };
  return app;
}
