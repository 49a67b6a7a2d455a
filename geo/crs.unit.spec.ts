import { describe, expect, it } from 'vitest';
import { CRS_CODE_PATTERN, CRS_PATTERN, crsInputKind } from './crs.js';

describe('the CRS pattern the OpenAPI document publishes', () => {
  const pattern = new RegExp(CRS_PATTERN);
  const accepted = [
    'EPSG:4326',
    ' EPSG:2056 ',
    'EPSG:4326+5773',
    'ESRI:102100',
    'urn:ogc:def:crs:EPSG::4326',
    'URN:OGC:DEF:CRS,crs:EPSG::4326',
    'GEOGCS["WGS 84",DATUM["x"]]',
    'projcrs ("x")',
    '{"type": "GeographicCRS"}',
    '+proj=longlat +datum=WGS84 +no_defs',
  ];
  const refused = [
    'http://example.com/crs',
    '/vsicurl/http://x',
    '/etc/passwd',
    './x.prj',
    '0000',
    'A[',
    '+proj=x +nadgrids=/etc/x',
    '+proj=tmerc +nadgrids=@null',
    '+init=epsg:4326',
    '{"a":1',
    '',
  ];

  it('accepts what the server accepts', () => {
    for (const text of accepted) {
      expect(crsInputKind(text), text).not.toBeNull();
      expect(pattern.test(text), text).toBe(true);
    }
  });

  it('refuses what the server refuses', () => {
    for (const text of refused) {
      expect(crsInputKind(text), text).toBeNull();
      expect(pattern.test(text), text).toBe(false);
    }
  });
});

describe('the code pattern of GET /crs/{code}', () => {
  const pattern = new RegExp(CRS_CODE_PATTERN);

  it('accepts codes and URNs, which the route looks up, and nothing else', () => {
    for (const text of ['EPSG:4326', ' ESRI:102100 ', 'EPSG:4326+5773', 'urn:ogc:def:crs:EPSG::4326']) {
      expect(['code', 'urn'], text).toContain(crsInputKind(text));
      expect(pattern.test(text), text).toBe(true);
    }
    for (const text of ['0000000000', 'GEOGCS["WGS 84"]', '{"type": "GeographicCRS"}', '+proj=longlat', '']) {
      expect(pattern.test(text), text).toBe(false);
    }
  });
});
