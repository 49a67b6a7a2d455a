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
}

export const mediaTypeOf = (format: string) => formatCatalog().find((f) => f.id === format)?.media_type ?? null;
