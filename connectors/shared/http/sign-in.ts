import { ConnectorError } from '../../../domain/transfers.js';
import { fetchJson, publicUrl } from './fetch.js';

/*
 * A user-name-and-password sign-in as field-data platforms take it (Mergin Maps, QFieldCloud): a
 * JSON POST whose 400 or 401 answer (servers differ by age) means the credentials were refused.
 */

/** POSTs `body` to `url`; a refusal is authentication_failed naming `who`, other failures as fetchJson throws them. */
export async function postSignIn<T>(url: string, body: Record<string, unknown>, who: string, signal: AbortSignal, maxBytes: number) {
  try {
    return await fetchJson<T>(
      { url, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), label: publicUrl(url) },
      signal,
      maxBytes,
    );
  } catch (error) {
    const status = error instanceof ConnectorError ? error.details.http_status : undefined;
    if (status === 400 || status === 401) {
      throw new ConnectorError('authentication_failed', `${who} refused the user name or password`, { url: publicUrl(url), http_status: status }, false);
    }
    throw error;
  }
}
