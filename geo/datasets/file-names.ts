import path from 'node:path';

/* File names as uploads and downloads carry them: made safe for file systems and GDAL, split into stem and extension. */

/**
 * The file name without any directory part and without characters that trouble file systems or
 * GDAL's connection-string prefixes; non-ASCII letters are kept (they become layer names).
 */
export function safeFilename(original: string): string {
  const base = original.split(/[\\/]/).pop() ?? '';
  let cleaned = base
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f:*?"<>|]/g, '_')
    .replace(/^[.\s]+/, '')
    .trim();
  if (Buffer.byteLength(cleaned) > 200) {
    const ext = extensionOf(cleaned);
    let stem = stemOf(cleaned);
    while (Buffer.byteLength(stem) > 180) stem = stem.slice(0, -1);
    cleaned = ext ? `${stem}.${ext}` : stem;
  }
  return cleaned || 'upload';
}

export function extensionOf(file: string): string {
  const base = path.basename(file);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

export function stemOf(file: string): string {
  const base = path.basename(file);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}
