/**
 * What every page shares: who is logged in, the catalogs (fetched once), a one-shot message
 * carried to the next page, and navigation.
 */
import { get } from './api.js';
import type { Format, Me, Transformation } from './types.js';

export interface App {
  session: Me | null;
  /** GET /api/v1/transformations, fetched once per page load. */
  transformations(): Promise<Transformation[]>;
  /** GET /api/v1/formats, fetched once per page load. */
  formats(): Promise<Format[]>;
  /** Shows a message on the next page (after a redirect). */
  flash(message: string): void;
  takeFlash(): string | null;
  navigate(hash: string): void;
  refreshSession(): Promise<Me | null>;
}

export function createApp(): App {
  let transformations: Promise<Transformation[]> | null = null;
  let formats: Promise<Format[]> | null = null;
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
