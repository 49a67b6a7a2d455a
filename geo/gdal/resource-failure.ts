import { DomainError } from '../../domain/errors.js';

/** What a failed GDAL process ran out of, if it says: time, memory or disk. */
export function resourceFailure(
  result: { timedOut: boolean; signal: string | null; stderr: string },
  limits: { timeoutMs: number; memoryBytes: number },
  what: string,
): DomainError | null {
  if (result.timedOut) {
    const minutes = Math.round(limits.timeoutMs / 60_000);
    return new DomainError(
      'processing_timeout',
      `${what} did not finish within ${minutes >= 1 ? `${minutes} minutes` : `${Math.round(limits.timeoutMs / 1000)} s`} and was stopped: raise SVC_GDAL_TIMEOUT_MIN, or convert fewer layers or features at a time`,
      { limit_ms: limits.timeoutMs, setting: 'SVC_GDAL_TIMEOUT_MIN' },
    );
  }
  const text = result.stderr;
  if (
    /No space left on device|Disk full|disk is full|database or disk is full|ENOSPC/i.test(text) ||
    result.signal === 'SIGXFSZ' ||
    /File too large/i.test(text)
  ) {
    return new DomainError('insufficient_storage', `${what} ran out of disk space on the server: free space under SVC_DATA_DIR, or write a smaller output`, {
      setting: 'SVC_DATA_DIR',
    });
  }
  if (
    /out of memory|Cannot allocate memory|bad_alloc|CPLMalloc|memory allocation failed/i.test(text) ||
    result.signal === 'SIGKILL' ||
    result.signal === 'SIGSEGV' ||
    result.signal === 'SIGABRT'
  ) {
    const mb = Math.round(limits.memoryBytes / (1024 * 1024));
    return new DomainError(
      'out_of_memory',
      `${what} ran out of memory (limit ${mb} MB per GDAL process): raise SVC_GDAL_MEMORY_MB, or convert fewer layers or features at a time`,
      {
        limit_bytes: limits.memoryBytes,
        setting: 'SVC_GDAL_MEMORY_MB',
      },
    );
  }
  return null;
}
