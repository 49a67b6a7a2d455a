/*
 * What processing changed or doubted without failing: a pipeline operation (a distance in
 * degrees, features repaired after a buffer) or a format (field names cut to ten characters).
 * Reported on the convert result, the transformed previews and the Run, with the details a
 * client needs to act (the old → new field names, the features concerned).
 */
export interface ProcessingWarning {
  /** Stable, for clients: units_degrees, geometry_repaired, geometry_invalid, field_renamed, … */
  code: string;
  message: string;
  /** The layer concerned, when one is. */
  layer?: string;
  details?: Record<string, unknown>;
}

/** Keeps the first of equal warnings (a warning per stage would repeat). */
export function distinctWarnings(warnings: ProcessingWarning[]): ProcessingWarning[] {
  const seen = new Set<string>();
  return warnings.filter((w) => {
    const key = `${w.code}\u0000${w.layer ?? ''}\u0000${w.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
