import { describe, expect, it } from 'vitest';
import { splitReading } from './reading-options.js';

describe('a saved source_resource split for the Job editor', () => {
  it('gives the connector its selector and the reading options their own fields', () => {
    expect(splitReading({ key: 'stations.csv', source_crs: 'EPSG:2263', x_column: 'easting', y_column: 'northing', z_column: 'z' })).toEqual({
      selector: { key: 'stations.csv' },
      reading: { source_crs: 'EPSG:2263', x_column: 'easting', y_column: 'northing', z_column: 'z' },
    });
  });

  it('leaves a selector without reading options whole, and reads nothing saved as nothing', () => {
    expect(splitReading({ schema: 'public', table: 'parcels' })).toEqual({ selector: { schema: 'public', table: 'parcels' }, reading: {} });
    expect(splitReading(null)).toEqual({ selector: {}, reading: {} });
    // A connector field that is not a string stays with the connector, even under a reading option's name.
    expect(splitReading({ source_crs: 4326 })).toEqual({ selector: { source_crs: 4326 }, reading: {} });
  });
});
