import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * Local HTTP servers that stop a transfer half-way until the test has looked: so a request's
 * progress is seen mid-way on every machine, however fast. Both listen on 127.0.0.1 only.
 */

/** Answers every GET with `body` and its Content-Length, sends `holdAt` bytes of it, then waits for release(). */
export async function startHeldFileServer(body: Buffer, holdAt: number, type = 'application/octet-stream') {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  const server: HttpServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': type, 'content-length': body.length });
    res.write(body.subarray(0, holdAt));
    void released.then(() => res.end(body.subarray(holdAt)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A webhook receiver that stops reading each request at `pauseAt` bytes until release(), and answers 204 at its end. */
export async function startHeldReceiver(pauseAt: number) {
  let released = false;
  const held: IncomingMessage[] = [];
  const bodies: number[] = [];
  const server: HttpServer = createServer((req, res) => {
    let got = 0;
    req.on('data', (chunk: Buffer) => {
      got += chunk.length;
      if (got >= pauseAt && !released && !held.includes(req)) {
        req.pause();
        held.push(req);
      }
    });
    req.on('end', () => {
      bodies.push(got);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    /** The size of each body received in full. */
    bodies,
    holding: () => held.length,
    release() {
      released = true;
      for (const req of held.splice(0)) req.resume();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
