import type { StoredDataset } from '../../domain/datasets.js';
import { formatCatalog } from '../../geo/datasets/formats.js';

/**
 * What one step hands to the next: the dataset to read, and the file a delivery would send if
 * no later step changes it (the extracted file as it came, the GeoPackage a transform wrote, the
 * converted output). Paths are relative to the Run's folder.
 */
export interface RunArtifact {
  dataset: StoredDataset;
  file: string;
  filename: string;
  /** GDAL driver short name (the formats catalog id). */
  format: string;
  media_type: string | null;
  layers: string[];
  /**
   * The Job's reading options (source_resource.source_crs, x_column …) when the file is what the
   * extract read, as it came: a deliver step that gets it unconverted opens it with them.
   */
  read?: Record<string, string>;
}

export const mediaTypeOf = (format: string) => formatCatalog().find((f) => f.id === format)?.media_type ?? null;
