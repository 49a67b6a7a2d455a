/**
 * Every call of the browser app goes through here: /api/v1, same-origin credentials (the
 * svc_session cookie), JSON bodies, and the error envelope turned into an ApiError whose
 * message is the server's sentence for people.
 */
export const API_BASE = '/api/v1';

export interface Issue {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Field problems of a validation error: `body.operations.0.distance` and its message. */
  get issues(): Issue[] {
    const issues = this.details.issues;
    // An invalid_parameter names its one field (`source_resource.source_crs`): shown there too.
    if (!Array.isArray(issues)) return typeof this.details.parameter === 'string' ? [{ path: this.details.parameter, message: this.message }] : [];
    return issues.filter((i): i is Issue => typeof i === 'object' && i !== null && typeof i.path === 'string' && typeof i.message === 'string');
  }
}

let onUnauthorized: ((error: ApiError) => void) | null = null;
/** Called when a request answers 401 (the session ended): the app shows the login page. */
export function setUnauthorizedHandler(handler: (error: ApiError) => void): void {
  onUnauthorized = handler;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Do not trigger the global 401 handler (the login form and the first "who am I"). */
  quiet401?: boolean;
  /** Extra request headers (Idempotency-Key on Run Now). */
  headers?: Record<string, string>;
}

function errorFrom(status: number, text: string): ApiError {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const e = body.error;
    if (e && typeof e.code === 'string' && typeof e.message === 'string') {
      return new ApiError(status, e.code, e.message, typeof e.details === 'object' && e.details !== null ? (e.details as Record<string, unknown>) : {});
    }
  } catch {
    // not JSON: a proxy or a crash answered
  }
  if (status === 413) return new ApiError(status, 'upload_too_large', 'The file is larger than the server accepts.');
  if (status >= 500) return new ApiError(status, 'internal_error', `The server could not answer (HTTP ${status}). Try again in a moment.`);
  return new ApiError(status, 'http_error', `The server refused the request (HTTP ${status}).`);
}

const networkError = () => new ApiError(0, 'network_error', 'Could not reach the server. Check the connection and try again.');

function handle(error: ApiError, options: RequestOptions): ApiError {
  if (error.status === 401 && !options.quiet401 && onUnauthorized) onUnauthorized(error);
  return error;
}

export async function request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const init: RequestInit = { method, credentials: 'same-origin', headers, signal: options.signal ?? null };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response: Response;
  try {
    response = await fetch(API_BASE + path, init);
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw networkError();
  }
  const text = await response.text();
  if (!response.ok) throw handle(errorFrom(response.status, text), options);
  if (!text) return undefined as T;
  return JSON.parse(text) as T;
}

export const get = <T>(path: string, options?: RequestOptions) => request<T>('GET', path, undefined, options);
export const post = <T>(path: string, body?: unknown, options?: RequestOptions) => request<T>('POST', path, body, options);
export const put = <T>(path: string, body?: unknown, options?: RequestOptions) => request<T>('PUT', path, body, options);
export const del = (path: string, options?: RequestOptions) => request<void>('DELETE', path, undefined, options);

export const query = (params: Record<string, string | number | undefined | null>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

export interface Upload<T> {
  promise: Promise<T>;
  abort(): void;
}

/**
 * A multipart upload with progress (fetch has no upload progress): XMLHttpRequest, same origin,
 * the file in the field `file`. onProgress gets 0..1 while sending; the promise settles on the
 * server's answer.
 */
export function upload<T>(
  path: string,
  file: File,
  onProgress: (fraction: number, sent: number, total: number) => void,
  fields: Record<string, string> = {},
): Upload<T> {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<T>((resolve, reject) => {
    xhr.open('POST', API_BASE + path);
    xhr.withCredentials = false; // same origin: the cookie goes anyway
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.total ? e.loaded / e.total : 1, e.loaded, e.total);
    });
    xhr.upload.addEventListener('load', () => onProgress(1, file.size, file.size));
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve(JSON.parse(xhr.responseText) as T);
        } catch {
          reject(new ApiError(xhr.status, 'internal_error', 'The server answered with something that is not JSON.'));
        }
      } else {
        reject(handle(errorFrom(xhr.status, xhr.responseText), {}));
      }
    });
    xhr.addEventListener('error', () => reject(networkError()));
    xhr.addEventListener('abort', () => reject(new ApiError(0, 'aborted', 'The upload was cancelled.')));
    const form = new FormData();
    // Form fields before the file: the server reads the ones it has seen when the file starts.
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', file, file.name);
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}

/** A sentence for people, whatever was thrown. */
export function plainMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error && error.name === 'AbortError') return 'The request was cancelled.';
  return 'Something went wrong in the page. Reload it and try again.';
}
