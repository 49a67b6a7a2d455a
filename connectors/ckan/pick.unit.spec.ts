import { describe, expect, it } from 'vitest';
import { ConnectorError } from '../../domain/transfers.js';
import type { CkanDataset } from './action.js';
import { pickResource, sameFormat, unchangedByMetadata, type CkanCursor } from './pick.js';

const dataset: CkanDataset = {
  id: 'd1',
  name: 'boroughs',
  resources: [
    { id: 'r1', name: 'Boroughs 2023', format: 'CSV', last_modified: '2023-05-01T10:00:00', created: '2023-05-01T09:00:00' },
    { id: 'r2', name: 'Boroughs 2024', format: 'csv', last_modified: '2024-05-01T10:00:00', created: '2024-05-01T09:00:00' },
    { id: 'r3', name: 'Shapes', format: 'SHP', last_modified: null, created: '2025-01-01T00:00:00' },
    { id: 'r4', name: 'Twice', format: 'GeoJSON', created: '2020-01-01T00:00:00' },
    { id: 'r5', name: 'Twice', format: 'GeoJSON', created: '2020-01-02T00:00:00' },
  ],
};

describe('choosing a CKAN resource', () => {
  it('by id, by unique name, and the newest of a format (formats compared loosely)', () => {
    expect(pickResource(dataset, { resource: 'r3' }).id).toBe('r3');
    expect(pickResource(dataset, { resource: 'Boroughs 2023' }).id).toBe('r1');
    expect(pickResource(dataset, { format: 'CSV' }).id).toBe('r2');
    expect(pickResource(dataset, { format: '.shp' }).id).toBe('r3');
    expect(pickResource(dataset, { format: 'geojson' }).id).toBe('r5');
    expect(sameFormat('text/csv', 'CSV')).toBe(true);
    expect(sameFormat(null, 'CSV')).toBe(false);
  });

  it('refuses an ambiguous name and says what the dataset has when nothing matches', () => {
    expect(() => pickResource(dataset, { resource: 'Twice' })).toThrow(/2 resources named "Twice"/);
    const error = (() => {
      try {
        pickResource(dataset, { format: 'GPKG' });
      } catch (e) {
        return e as ConnectorError;
      }
    })();
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error!.reason).toBe('not_found');
    expect(error!.message).toContain('Shapes (SHP)');
  });

  it('unchanged only for the same resource with the same known last_modified and hash', () => {
    const cursor: CkanCursor = { resource_id: 'r2', last_modified: '2024-05-01T10:00:00', hash: 'abc', etag: null, http_last_modified: null };
    const r2 = { ...dataset.resources[1]!, hash: 'abc' };
    expect(unchangedByMetadata(cursor, r2)).toBe(true);
    expect(unchangedByMetadata(cursor, { ...r2, hash: 'def' })).toBe(false);
    expect(unchangedByMetadata(cursor, { ...r2, last_modified: '2024-06-01T00:00:00' })).toBe(false);
    expect(unchangedByMetadata({ ...cursor, resource_id: 'r1' }, r2)).toBe(false);
    expect(unchangedByMetadata(null, r2)).toBe(false);
    // nothing known: the download's ETag decides
    expect(unchangedByMetadata({ ...cursor, last_modified: null, hash: null }, { ...r2, last_modified: null, hash: '' })).toBe(false);
  });
});
