import { z } from 'zod';
import { connectorByType } from '../../connectors/registry.js';
import type { ConnectionRow } from '../../projections/connections.js';
import { timestamp } from '../schemas.js';

/* What /sources, /destinations and /connectors answer, and a saved connection's row shown as a Source or Destination. */

export const testResultSchema = z
  .object({
    ok: z.boolean(),
    status: z.string().describe('ok, unreachable, timeout, authentication_failed, permission_denied, tls_error, not_found, invalid_response …'),
    message: z.string(),
    tried: z.record(z.string(), z.unknown()).describe('What was contacted (host, port, bucket, url): never a secret'),
    duration_ms: z.number(),
  })
  .meta({ id: 'ConnectionTestResult' });

export const discoverySchema = z
  .object({
    host: z.string(),
    database: z.string(),
    schemas: z.array(z.string()),
    schema: z.string().optional(),
    tables: z.array(z.object({ schema: z.string(), name: z.string(), has_geometry: z.boolean(), geometry_type: z.string().nullable() })).optional(),
  })
  .meta({ id: 'PostgisDiscovery' });

export const connectorSchema = z
  .object({
    type: z.string(),
    label: z.string(),
    description: z.string(),
    kinds: z.array(z.enum(['source', 'destination'])),
    implemented: z.boolean(),
    verified_against: z.string(),
    configuration: z.record(z.string(), z.unknown()).describe('JSON Schema of the configuration'),
    secrets: z.array(z.string()),
    example: z.record(z.string(), z.unknown()),
    capabilities: z.object({
      test: z.boolean(),
      discover: z.boolean(),
      projects: z.boolean().describe('POST /sources/{id}/projects and /inspect-project answer (qfieldcloud, merginmaps)'),
      import: z.boolean(),
      deliver: z.boolean(),
      incremental: z.boolean(),
      change_check: z.boolean().describe("Whether a Job may have an on-change trigger on it (the connector's cheap check)"),
    }),
    source: z
      .object({
        resource: z.record(z.string(), z.unknown()).describe('JSON Schema of source_resource'),
        resource_required: z.boolean(),
        resource_shorthand: z.string().nullable(),
        importable: z.boolean(),
        incremental: z.boolean(),
        incremental_note: z.string().nullable(),
        change_check_note: z.string().nullable().describe('What an on-change check compares; null: no on-change trigger for this type'),
      })
      .nullable(),
    destination: z.object({ target: z.record(z.string(), z.unknown()).describe('JSON Schema of destination_target'), deliverable: z.boolean() }).nullable(),
  })
  .meta({ id: 'Connector' });

/** A saved connection: its public fields, and has_<secret> flags instead of secret values. */
export const connectionSchema = (Noun: string) =>
  z
    .object({
      id: z.string(),
      name: z.string(),
      type: z.string(),
      configuration: z.record(z.string(), z.unknown()).describe('Public fields, plus has_<secret> flags instead of secret values'),
      created_at: timestamp,
      updated_at: timestamp,
    })
    .meta({ id: Noun });

/** The public configuration as responses show it: fields plus a has_<secret> flag per secret field of the type (`secrets`). */
export function publicConfiguration(secrets: readonly string[] | undefined, configuration: Record<string, unknown>, storedSecrets: readonly string[]) {
  const flags = Object.fromEntries((secrets ?? storedSecrets).map((field) => [`has_${field}`, storedSecrets.includes(field)]));
  return { ...configuration, ...flags };
}

export const representConnection = (row: ConnectionRow) => ({
  id: row.id,
  name: row.name,
  type: row.type,
  configuration: publicConfiguration(connectorByType(row.type)?.secrets, row.configuration, row.secret_fields),
  created_at: row.created_at,
  updated_at: row.updated_at,
});
