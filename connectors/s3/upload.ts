import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createReadStream } from 'node:fs';
import type { ConnectorContext } from '../types.js';
import { byteMeter } from '../shared/files/save-stream.js';

/** Above this size an object goes up in parts (S3 takes at most 5 GiB in one PutObject). */
export const SINGLE_PUT_MAX_BYTES = 64 * 1024 * 1024;
/** S3 allows at most 10,000 parts of at least 5 MiB (but the last). */
const MIN_PART_BYTES = 16 * 1024 * 1024;
const MAX_PARTS = 10_000;
const PARTS_AT_ONCE = 3;

export interface ObjectUpload {
  bucket: string;
  key: string;
  file: string;
  size: number;
  contentType?: string;
  metadata: Record<string, string>;
}

/**
 * Writes a local file to one S3 object so that no reader ever sees part of it: a single
 * PutObject, or for large files a multipart upload, are both atomic in S3 (the object appears,
 * or replaces the old one, only when the PutObject or CompleteMultipartUpload succeeds). A
 * failed multipart upload is aborted so its parts are not kept (and billed). The file is read
 * from disk as a stream, part by part, never whole into memory.
 */
export async function uploadObject(
  client: S3Client,
  upload: ObjectUpload,
  ctx: Pick<ConnectorContext, 'signal' | 'progress'>,
  options: { partBytes?: number; singlePutMaxBytes?: number; checksums?: boolean } = {},
): Promise<void> {
  const singleMax = options.singlePutMaxBytes ?? SINGLE_PUT_MAX_BYTES;
  const common = { Bucket: upload.bucket, Key: upload.key, ContentType: upload.contentType, Metadata: upload.metadata };
  if (upload.size <= singleMax) {
    const meter = byteMeter(ctx);
    await client.send(new PutObjectCommand({ ...common, Body: createReadStream(upload.file).pipe(meter.stream), ContentLength: upload.size }), {
      abortSignal: ctx.signal,
    });
    return;
  }
  const partBytes = options.partBytes ?? Math.max(MIN_PART_BYTES, Math.ceil(upload.size / MAX_PARTS));
  // With checksums on (AWS), every part carries a CRC32 that S3 checks again when it assembles them.
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ ...common, ...(options.checksums ? { ChecksumAlgorithm: 'CRC32' } : {}) }), {
    abortSignal: ctx.signal,
  });
  try {
    const count = Math.ceil(upload.size / partBytes);
    const parts: CompletedPart[] = [];
    let next = 0;
    let sent = 0;
    const worker = async () => {
      while (next < count) {
        const index = next++;
        const start = index * partBytes;
        const end = Math.min(upload.size, start + partBytes);
        const answer = await client.send(
          new UploadPartCommand({
            Bucket: upload.bucket,
            Key: upload.key,
            UploadId,
            PartNumber: index + 1,
            Body: createReadStream(upload.file, { start, end: end - 1 }),
            ContentLength: end - start,
          }),
          { abortSignal: ctx.signal },
        );
        parts.push({ PartNumber: index + 1, ETag: answer.ETag, ...(answer.ChecksumCRC32 ? { ChecksumCRC32: answer.ChecksumCRC32 } : {}) });
        sent += end - start;
        ctx.progress?.({ bytes: sent });
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARTS_AT_ONCE, count) }, worker));
    parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
    await client.send(new CompleteMultipartUploadCommand({ Bucket: upload.bucket, Key: upload.key, UploadId, MultipartUpload: { Parts: parts } }), {
      abortSignal: ctx.signal,
    });
  } catch (error) {
    await client.send(new AbortMultipartUploadCommand({ Bucket: upload.bucket, Key: upload.key, UploadId })).catch(() => undefined);
    throw error;
  }
}
