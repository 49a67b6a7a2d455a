/** The server's upload limit (GET /system `limits.max_upload_bytes`) as people read it, checked before a byte is sent. */

/** A size in MB as SVC_MAX_UPLOAD_MB counts them (MiB): "256 MB", "0.5 MB". */
export function megabytes(n: number): string {
  const mb = n / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : mb < 10 ? mb.toFixed(1) : Math.round(mb)} MB`;
}

/** Why a file cannot go up before a byte is sent; null when it can. */
export function tooLarge(file: { name: string; size: number }, maxBytes: number | null): string | null {
  if (maxBytes === null || file.size <= maxBytes) return null;
  return `${file.name} is ${megabytes(file.size)}: this server accepts uploads up to ${megabytes(maxBytes)}. Import large data from a saved Source instead, or ask the operator to raise the limit.`;
}
