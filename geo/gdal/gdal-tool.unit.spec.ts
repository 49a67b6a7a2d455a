import { describe, expect, it } from 'vitest';
import { gdalErrors } from './gdal-tool.js';

describe('gdalErrors', () => {
  it("keeps GDAL's error lines and adds what a database server said after them", () => {
    const stderr = [
      'Warning 1: a warning is not an error',
      'ERROR 1: COPY statement failed.',
      'ERROR:  numeric field overflow',
      'DETAIL:  A field with precision 19, scale 11 must round to an absolute value less than 10^8.',
      'CONTEXT:  COPY stage, line 1, column Shape_Area: "1623819823.80999994278"',
      'ERROR 1: Terminating translation prematurely after failed translation of layer nybb (use -skipfailures to skip errors)',
    ].join('\n');
    expect(gdalErrors(stderr)).toEqual([
      'COPY statement failed. numeric field overflow A field with precision 19, scale 11 must round to an absolute value less than 10^8.',
      'Terminating translation prematurely after failed translation of layer nybb (use -skipfailures to skip errors)',
    ]);
  });

  it('ignores server lines before any GDAL error', () => {
    expect(gdalErrors('ERROR:  stray\nERROR 4: real one')).toEqual(['real one']);
  });
});
