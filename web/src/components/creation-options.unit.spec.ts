import { describe, expect, it } from 'vitest';
import { formatCreationOptions, parseCreationOptions } from './creation-options.js';

describe('creation options as lines', () => {
  it('reads KEY=VALUE as a file option and layer:KEY=VALUE as a layer option, names upper-cased', () => {
    expect(parseCreationOptions('row_group_size = 100000\n\n# a comment\nCOMPRESSION=SNAPPY\nlayer: GEOMETRY=AS_XY\nATTRIBUTES=name,kind=x')).toEqual({
      options: {
        dataset: { ROW_GROUP_SIZE: '100000', COMPRESSION: 'SNAPPY', ATTRIBUTES: 'name,kind=x' },
        layer: { GEOMETRY: 'AS_XY' },
      },
    });
    expect(parseCreationOptions('COMPRESSION_LEVEL=')).toEqual({ options: { dataset: { COMPRESSION_LEVEL: '' } } });
  });

  it('answers null for nothing typed, and names the first line it cannot read', () => {
    expect(parseCreationOptions('  \n\n')).toEqual({ options: null });
    expect(parseCreationOptions('MAXZOOM=12\nMINZOOM 3')).toEqual({ error: 'Line 2 is not KEY=VALUE (or layer:KEY=VALUE): "MINZOOM 3"' });
    expect(parseCreationOptions('=3')).toHaveProperty('error');
    expect(parseCreationOptions('ROW GROUP=3')).toHaveProperty('error');
  });

  it('writes saved options back as the same lines', () => {
    const saved = { dataset: { ROW_GROUP_SIZE: '5000', SORT: 'NONE' }, layer: { FID: 'row_id' } };
    expect(formatCreationOptions(saved)).toBe('ROW_GROUP_SIZE=5000\nSORT=NONE\nlayer:FID=row_id');
    expect(parseCreationOptions(formatCreationOptions(saved))).toEqual({ options: saved });
    expect(formatCreationOptions(null)).toBe('');
  });
});
