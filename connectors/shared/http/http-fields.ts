import { z } from 'zod';

/*
 * Configuration fields of the HTTP-family connectors (http, webhook, ogcfeatures …) and the
 * request headers built from them.
 */

const headerNamePattern = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;

export const headerName = z.string().regex(headerNamePattern, 'an HTTP header name (letters, digits and -)');

/**
 * Extra request headers, stored in plain text: credentials are refused here and belong in the
 * type's secret fields (bearer token, password, API key), which are sealed and never shown.
 */
export const plainHeaders = z
  .record(
    headerName,
    z
      .string()
      .max(4000)
      .regex(/^[^\r\n\u0000]*$/, 'one line, no control characters'),
  )
  .superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      if (/^(authorization|proxy-authorization|cookie)$/i.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `${name} carries credentials: use the auth fields, whose values are kept secret` });
      } else if (/^(host|content-length|transfer-encoding|connection)$/i.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `${name} is set by the HTTP client itself` });
      }
    }
    if (Object.keys(headers).length > 50) ctx.addIssue({ code: 'custom', message: 'at most 50 headers' });
  })
  .default({});

/** Header names compared case-insensitively: whether `headers` already sets `name`. */
export const hasHeader = (headers: Record<string, string>, name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name.toLowerCase());
