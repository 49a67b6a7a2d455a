import { z } from 'zod';
import { notifierByType, notifiers } from '../../notifiers/registry.js';
import type { ChannelRow } from '../../projections/notification-channels.js';
import { publicConfiguration } from '../connections/representation.js';
import { timestamp } from '../schemas.js';

/* A notification channel as the API shows it (its secrets as has_<field> flags), and the catalogue of channel types. */

export const channelSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    configuration: z.record(z.string(), z.unknown()).describe('Public fields, plus has_<secret> flags instead of secret values'),
    endpoint: z.string().describe("Where it sends, without secrets: a webhook's origin and format, an SMTP server and its recipients"),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'NotificationChannel' });

export const representChannel = (row: ChannelRow): z.infer<typeof channelSchema> => ({
  id: row.id,
  name: row.name,
  type: row.type,
  configuration: publicConfiguration(notifierByType(row.type)?.secrets, row.configuration, row.secret_fields),
  endpoint: row.endpoint,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export const channelTestSchema = z
  .object({
    ok: z.boolean(),
    status: z.string().describe('ok, unreachable, timeout, authentication_failed, permission_denied, tls_error, not_found, invalid_response, server_error'),
    message: z.string(),
    endpoint: z.string(),
    duration_ms: z.number(),
  })
  .meta({ id: 'NotificationChannelTestResult' });

export const channelTypeSchema = z
  .object({
    type: z.string(),
    label: z.string(),
    description: z.string(),
    configuration: z.record(z.string(), z.unknown()).describe('JSON Schema of the configuration'),
    secrets: z.array(z.string()),
    required_secrets: z.array(z.string()),
    example: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'NotificationChannelType' });

export const channelTypeCatalog = () =>
  notifiers.map((n) => ({
    type: n.type,
    label: n.label,
    description: n.description,
    configuration: z.toJSONSchema(n.configuration, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>,
    secrets: [...n.secrets],
    required_secrets: [...n.requiredSecrets],
    example: n.example,
  }));
