import type { Readable } from 'node:stream';
import type { ConnectorContext, ExtractResult, SyncState } from '../../types.js';
import type { ConnectorError } from '../../../domain/transfers.js';
import { saveObject } from './save-stream.js';

/*
 * What the object-store connectors (s3, azureblob) share: reading one object only when its ETag
 * changed since the previous Run, and recognising a delivery that already finished. Each store
 * says how to talk to its SDK (the `read` and the metadata it keeps); the rules live here once.
 */

/** One object as a store's SDK answers a read. */
export interface ObjectAnswer {
  body: Readable | NodeJS.ReadableStream | undefined;
  length: number | undefined;
  etag: string | null;
}

export interface ObjectRead {
  /** The cursor field naming the object (`key` for s3, `blob` for azureblob: kept as Jobs stored it). */
  field: string;
  /** The full object name (prefix applied). */
  name: string;
  /** Reads the object, sending `ifNoneMatch` as If-None-Match when given. */
  read(ifNoneMatch: string | undefined): Promise<ObjectAnswer>;
  /** Whether the store's SDK error is its HTTP 304 (what a conditional read answers for an unchanged object). */
  notModified(error: unknown): boolean;
  /** The store's classification of its SDK's errors. */
  failure(error: unknown): ConnectorError;
  label: string;
  where: Record<string, string>;
}

/**
 * An object-store Source's extract: the previous Run's ETag goes out as If-None-Match when its
 * cursor names the same object; an unchanged object ends the Run early and keeps the cursor.
 * The body streams to disk with the size limit (saveObject).
 */
export async function readObjectIfChanged(object: ObjectRead, sync: SyncState | null | undefined, ctx: ConnectorContext): Promise<ExtractResult> {
  const cursor = (sync?.cursor ?? null) as Record<string, string | null> | null;
  const ifNoneMatch = cursor?.[object.field] === object.name && cursor.etag ? cursor.etag : undefined;
  let answer: ObjectAnswer;
  try {
    answer = await object.read(ifNoneMatch);
  } catch (error) {
    if (ifNoneMatch && object.notModified(error)) return { file: '', filename: '', bytes: 0, sync: sync!, unchanged: true };
    throw object.failure(error);
  }
  const { file, filename, bytes } = await saveObject(answer.body, answer.length, object.name, ctx, object.label, object.where);
  return { file, filename, bytes, sync: { cursor: { [object.field]: object.name, etag: answer.etag } } };
}

/**
 * Whether a delivery already finished: the object carries this delivery's id in its metadata
 * and has the output's size (a retried or resumed delivery then has nothing left to do).
 */
export function alreadyDelivered(existing: { deliveryId: string | undefined; size: number | undefined } | null, deliveryId: string, size: number): boolean {
  return existing !== null && existing.deliveryId === deliveryId && existing.size === size;
}

/**
 * The on-change check of an object-store Source: the object's current ETag from a HEAD (its
 * metadata, never its bytes) against the cursor's, when the cursor names the same object.
 */
export async function objectChanged(
  object: Pick<ObjectRead, 'field' | 'name' | 'failure'> & { etag(): Promise<string | null> },
  sync: SyncState | null | undefined,
): Promise<boolean> {
  const cursor = (sync?.cursor ?? null) as Record<string, string | null> | null;
  if (!cursor || cursor[object.field] !== object.name || !cursor.etag) return true;
  let etag: string | null;
  try {
    etag = await object.etag();
  } catch (error) {
    throw object.failure(error);
  }
  return etag !== cursor.etag;
}
