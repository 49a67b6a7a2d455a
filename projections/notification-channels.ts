import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { channelNotFound } from '../domain/notifications/channel.js';
import { isoTime } from '../platform/db.js';
import { readPage, type Page, type PageRequest } from './pagination.js';
import { ownedRowsProjector } from './projector.js';

/**
 * Notification channels: public fields, where they send (`endpoint`) and the names of the secrets
 * that hold a value. Sealed secrets stay in the event store.
 */
export const notificationChannelsProjector = ownedRowsProjector({
  name: 'notification-channels',
  version: 1,
  table: 'notification_channels',
  columns: sql.fragment`name text NOT NULL, type text NOT NULL, configuration jsonb NOT NULL, endpoint text NOT NULL, secret_fields text[] NOT NULL`,
  created: ['NotificationChannelCreated'],
  updated: ['NotificationChannelUpdated'],
  deleted: ['NotificationChannelDeleted'],
  id: 'channel_id',
  values: (d) => ({
    name: d.name,
    type: d.type,
    configuration: sql.jsonb(d.configuration),
    endpoint: d.endpoint,
    secret_fields: sql.array(d.secret_fields, 'text'),
  }),
});

/** A channel as the use cases read it: public fields and the names of the secrets it holds, never their values. */
const channelRow = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  configuration: z.record(z.string(), z.unknown()),
  endpoint: z.string(),
  secret_fields: z.array(z.string()),
  created_at: isoTime,
  updated_at: isoTime,
});
export type ChannelRow = z.infer<typeof channelRow>;

const columns = sql.fragment`id, name, type, configuration, endpoint, secret_fields, created_at, updated_at`;

/** The owner's channel; any other is notification_channel_not_found. */
export async function loadChannel(pool: DatabasePool, ownerId: string, id: string): Promise<ChannelRow> {
  const row = await pool.maybeOne(sql.type(channelRow)`SELECT ${columns} FROM rm.notification_channels WHERE id = ${id} AND owner_id = ${ownerId}`);
  if (!row) throw channelNotFound(id);
  return row;
}

/** The owner's channels, newest first. */
export async function listChannels(pool: DatabasePool, ownerId: string, page: PageRequest): Promise<Page<ChannelRow>> {
  return readPage(pool, channelRow, sql.fragment`SELECT ${columns} FROM rm.notification_channels`, sql.fragment`owner_id = ${ownerId}`, page);
}

/** Which of these ids are channels of the owner's. */
export async function ownedChannelIds(pool: DatabasePool, ownerId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await pool.anyFirst(
    sql.type(z.object({ id: z.string() }))`SELECT id FROM rm.notification_channels WHERE owner_id = ${ownerId} AND id = ANY(${sql.array(ids, 'text')})`,
  );
  return new Set(found);
}
