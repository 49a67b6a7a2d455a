import { describe, expect, it } from 'vitest';
import { ConnectorError } from '../../../domain/transfers.js';
import { nextHop, type HopRequest } from './redirects.js';

const first = 'https://api.example.org:8443/login';
const post = (body = 'password=hunter2'): HopRequest<string> => ({
  url: first,
  method: 'POST',
  headers: { authorization: 'Bearer t', cookie: 'a=b', 'x-api-key': 'k', 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
  body,
});
const rules = { label: 'the service', secretHeaders: ['X-API-Key'] };
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return error as ConnectorError;
  }
  throw new Error('expected a refusal');
};

describe('what a redirect may carry (redirects.ts)', () => {
  it('keeps everything on a 307 within the origin', () => {
    expect(nextHop(post(), first, 307, '/login2', rules)).toEqual({ ...post(), url: 'https://api.example.org:8443/login2' });
  });

  it('refuses to send a body to another scheme, host or port, and names where the redirect pointed', () => {
    for (const away of ['http://api.example.org:8443/x', 'https://other.example.org:8443/x', 'https://api.example.org:9443/x', 'https://api.example.org/x']) {
      for (const status of [307, 308]) {
        const error = refusal(() => nextHop(post(), first, status, `${away}?token=secret`, rules));
        expect(error).toBeInstanceOf(ConnectorError);
        expect(error.reason).toBe('invalid_response');
        expect(error.message).toContain(`to another origin, ${away}`);
        expect(error.message).not.toContain('secret');
      }
    }
  });

  it('drops credential and named secret headers on a redirect that leaves the origin as a GET', () => {
    const next = nextHop(post(), first, 303, 'https://cdn.example.org/file', rules);
    expect(next).toEqual({ url: 'https://cdn.example.org/file', method: 'GET', headers: { accept: 'application/json' }, body: undefined });
    const get = nextHop({ ...post(), method: 'GET' }, first, 302, 'https://api.example.org:9443/file', rules);
    expect(Object.keys(get.headers)).toEqual(['content-type', 'accept']);
  });

  it('turns a POST into a GET on 301/302 (as browsers do) and keeps PUT and its body on the same origin', () => {
    expect(nextHop(post(), first, 302, '/done', rules)).toMatchObject({ method: 'GET', body: undefined });
    expect(nextHop({ ...post(), method: 'PUT' }, first, 301, '/moved', rules)).toMatchObject({ method: 'PUT', body: 'password=hunter2' });
  });

  it('lets a body that holds no secret follow, when the caller says so; never a streamed body', () => {
    expect(nextHop(post('{"public":true}'), first, 307, 'https://elsewhere.example.org/', { ...rules, bodyMayLeaveOrigin: true }).body).toBe('{"public":true}');
    expect(refusal(() => nextHop(post(), first, 307, '/again', { ...rules, bodyRepeatable: false })).message).toContain('cannot be sent twice');
  });

  it('follows only http and https', () => {
    expect(refusal(() => nextHop({ ...post(), method: 'GET' }, first, 302, 'file:///etc/passwd', rules)).message).toContain('file: URL');
  });
});
