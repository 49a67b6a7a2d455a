import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { ConnectorContext, DeliverInput } from '../connectors/types.js';

/** What a connector is given for one call: a fresh work folder, a silent logger, a size limit. */
export function connectorContext(overrides: Partial<ConnectorContext> = {}): ConnectorContext {
  return {
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }),
    workDir: mkdtempSync(path.join(tmpdir(), 'svc-connector-')),
    maxBytes: 10 * 1024 * 1024,
    ...overrides,
  };
}

/** What an activity hands a connector's deliver: the converted file and a stable delivery id. */
export const deliverInput = (file: string, deliveryId: string, mediaType: string | null = null): DeliverInput => ({
  file,
  filename: path.basename(file),
  format: 'GPKG',
  mediaType,
  layers: ['layer'],
  deliveryId,
});
