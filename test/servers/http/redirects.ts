import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Listening, listenStandIn, readBody } from '../standin.js';

/*
 * Servers that answer with redirects, as a hostile or misconfigured remote would (issue 32):
 *
 * - a redirect chain: every request is answered 307 (repeat it, body and all), then 302, then a
 *   400 with a Google-shaped error object. node-fetch 3.3.2 threw where nothing catches on the
 *   second redirect of a request with a body, ending the process that sent it;
 * - a redirect to another origin: every request to `url` is answered 307 (or `status`) with the
 *   same path and query on a second port of loopback, which records everything it receives, so
 *   a suite can check that no secret arrived there.
 */

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A stand-in whose handler gets the whole body (as Latin-1: byte for byte, whatever was sent). */
const listen = (handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<Listening> =>
  listenStandIn(async (req, res) => handler(req, res, (await readBody(req)).toString('latin1')));

export interface RedirectChain {
  url: string;
  received: Received[];
  stop(): Promise<void>;
}

export async function startRedirectChain(): Promise<RedirectChain> {
  const received: Received[] = [];
  const { url, stop } = await listen((req, res, body) => {
    const at = new URL(req.url!, 'http://chain');
    received.push({ method: req.method!, path: at.pathname, headers: req.headers, body });
    const hop = Number(at.searchParams.get('hop') ?? 0);
    if (hop < 2) {
      at.searchParams.set('hop', String(hop + 1));
      res.writeHead(hop === 0 ? 307 : 302, { location: `${at.pathname}${at.search}` }).end();
      return;
    }
    const text = JSON.stringify({
      error: { code: 400, message: 'the end of a redirect chain', errors: [{ reason: 'invalid', message: 'the end of a redirect chain' }] },
    });
    res.writeHead(400, { 'content-type': 'application/json; charset=UTF-8' }).end(text);
  });
  return { url, received, stop };
}

export interface CrossOriginRedirect {
  /** Where connections are configured to go: it redirects everything. */
  url: string;
  /** The other origin (another port of loopback): it records what arrives and answers `answer`. */
  elsewhere: string;
  /** What reached the other origin. */
  received: Received[];
  /** Everything the other origin received, as one text (headers, paths, bodies), to search for secrets. */
  seen(): string;
  stop(): Promise<void>;
}

export async function startCrossOriginRedirect(options: { status?: number; answer?: { status: number; body: unknown } } = {}): Promise<CrossOriginRedirect> {
  const received: Received[] = [];
  const answer = options.answer ?? { status: 401, body: { error: 'who are you?' } };
  const other = await listen((req, res, body) => {
    received.push({ method: req.method!, path: req.url!, headers: req.headers, body });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
  const first = await listen((req, res) => {
    res.writeHead(options.status ?? 307, { location: `${other.url}${req.url}` }).end();
  });
  return {
    url: first.url,
    elsewhere: other.url,
    received,
    seen: () => received.map((r) => `${r.method} ${decodeURIComponent(r.path)}\n${JSON.stringify(r.headers)}\n${r.body}`).join('\n'),
    async stop() {
      await first.stop();
      await other.stop();
    },
  };
}
