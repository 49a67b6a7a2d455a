import { describe, expect, it } from 'vitest';
import { megabytes, tooLarge } from './upload-limit.js';

const MB = 1024 * 1024;

describe('upload limit', () => {
  it('says sizes in MB as SVC_MAX_UPLOAD_MB counts them', () => {
    expect(megabytes(256 * MB)).toBe('256 MB');
    expect(megabytes(1.5 * MB)).toBe('1.5 MB');
    expect(megabytes(123.4 * MB)).toBe('123 MB');
  });

  it('refuses a file over the limit with both sizes, and lets one at the limit through', () => {
    expect(tooLarge({ name: 'big.gpkg', size: 300 * MB }, 256 * MB)).toMatch(/^big\.gpkg is 300 MB: this server accepts uploads up to 256 MB\./);
    expect(tooLarge({ name: 'ok.gpkg', size: 256 * MB }, 256 * MB)).toBeNull();
    // The limit not known yet (GET /system pending): the server still checks
    expect(tooLarge({ name: 'any.gpkg', size: 300 * MB }, null)).toBeNull();
  });
});
