/**
 * A dataset as events and payloads keep it: a name relative to its owner's files, plus how GDAL
 * opens it. The one shape for a Workspace's upload and for what a Run's steps hand each other.
 */
export interface StoredDataset {
  path: string;
  open_options: string[];
  driver: string | null;
  /** CRS assumed for layers that carry none (CSV coordinates are WGS 84 by convention). */
  assumed_crs: string | null;
  /** assumed_crs replaces the file's own CRS (source_crs on upload or import); absent before it existed. */
  crs_override?: boolean;
}
