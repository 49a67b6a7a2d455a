/* Text of GDAL's messages as users may see it: no server paths. */

/** GDAL messages quote file names; the API never shows server paths. */
export function scrubPaths(message: string): string {
  // Two segments at least, so a value like "Biel/Bienne" in a message is left alone.
  return message.replace(/(?:\/[^\s'"`,;:()/]+){2,}\/?/g, (m) => `<${m.split('/').filter(Boolean).pop() || 'file'}>`);
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
