import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/** One request as a loopback receiver saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  /** https://127.0.0.1:<port> (or http:// for a plain receiver). */
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** Resolves once `count` requests have arrived (bounded by timeoutMs). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export type Responder = (req: ReceivedRequest, res: http.ServerResponse) => void;

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

/** A real HTTPS server on 127.0.0.1 with the receiver certificate (trusted through NODE_EXTRA_CA_CERTS, see
 * vitest.config.ts) that records every request and answers with `respond` (default 200 `ok`). */
export async function startReceiver(respond: Responder = (_req, res) => res.end('ok'), options: { tls?: boolean } = {}): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      waiters.splice(0).forEach((w) => w());
      respond(entry, res);
    });
  };
  const tls = options.tls ?? true;
  const server = tls ? https.createServer({ key: fixture('receiver-key.pem'), cert: fixture('receiver-cert.pem') }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    received,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
