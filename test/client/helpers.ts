import fs from 'node:fs';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach } from 'vitest';
import { HttpClient, type HttpClientOptions } from '../../src/client/index.js';

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/** A request as the loopback server received it. */
export interface Received {
  method: string;
  /** Path and query, as sent. */
  path: string;
  searchParams: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Answers one request; the body has been read already. */
export type Responder = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

/** A path with its query, exactly as sent, or a test of it. */
type PathMatch = string | ((path: string) => boolean);

interface Interceptor {
  path: PathMatch;
  method: string;
  headers: Record<string, string>;
  respond: Responder;
  remaining: number;
}

export interface Reply {
  /** Answer this many matching requests (default 1). */
  times(count: number): void;
}

export interface Intercept {
  reply(status: number, body?: unknown, init?: { headers?: Record<string, string | string[]> }): Reply;
  /** Any other answer: a stall, a cut connection, bytes that are not HTTP. */
  respond(responder: Responder): Reply;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:PORT` (https with `tls`). */
  url: string;
  /** Scripted answers, used in the order given; a request none matches gets a 501 naming it. */
  intercept(match: { path: PathMatch; method?: string; headers?: Record<string, string> }): Intercept;
  calls(): Received[];
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

function reply(status: number, body: unknown, headers: Record<string, string | string[]> = {}): Responder {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  return (_req, res) => res.writeHead(status, headers).end(text);
}

/** A real HTTP server on 127.0.0.1 and a port of its own, answering from a script of interceptors. */
export async function loopbackServer(options: { tls?: boolean } = {}): Promise<LoopbackServer> {
  const interceptors: Interceptor[] = [];
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const call: Received = {
        method: req.method ?? 'GET',
        path,
        searchParams: Object.fromEntries(new URL(path, 'http://loopback').searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(call);
      const found = interceptors.find(
        (i) =>
          i.remaining > 0 &&
          (typeof i.path === 'string' ? i.path === call.path : i.path(call.path)) &&
          i.method === call.method &&
          Object.entries(i.headers).every(([name, value]) => req.headers[name.toLowerCase()] === value),
      );
      if (found === undefined) {
        reply(501, { error: `no interceptor for ${call.method} ${call.path}` }, JSON_HEADERS)(req, res, call);
        return;
      }
      found.remaining -= 1;
      found.respond(req, res, call);
    });
  };
  const server = options.tls
    ? https.createServer(
        {
          key: fs.readFileSync(new URL('../fixtures/tls/self-signed-key.pem', import.meta.url)),
          cert: fs.readFileSync(new URL('../fixtures/tls/self-signed-cert.pem', import.meta.url)),
        },
        handle,
      )
    : http.createServer(handle);
  let accepted = 0;
  server.on('connection', (socket: Socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const add = (match: { path: PathMatch; method?: string; headers?: Record<string, string> }, respond: Responder) => {
    const interceptor: Interceptor = {
      path: match.path,
      method: match.method ?? 'GET',
      headers: match.headers ?? {},
      respond,
      remaining: 1,
    };
    interceptors.push(interceptor);
    return {
      times(count: number) {
        interceptor.remaining = count;
      },
    };
  };
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    intercept: (match) => ({
      reply: (status, body, init) => add(match, reply(status, body, init?.headers)),
      respond: (responder) => add(match, responder),
    }),
    calls: () => received,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        // Stalled answers hold their sockets open; a test ends them all.
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface Harness {
  server: LoopbackServer;
  client: HttpClient;
  calls: () => Received[];
  close: () => Promise<void>;
}

/** A client on its own loopback server, with tiny backoff so that retry tests stay fast. */
export async function harness(options: Partial<HttpClientOptions> = {}, tls = false): Promise<Harness> {
  const server = await loopbackServer({ tls });
  const client = new HttpClient({ baseUrl: server.url, backoff: { baseMs: 1, capMs: 2 }, ...options });
  return {
    server,
    client,
    calls: () => server.calls(),
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** For tests that start harnesses: the function returned starts one (as `harness` does); after each test, the
 * one it started last is closed. */
export function useHarness(): (...args: Parameters<typeof harness>) => Promise<Harness> {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  return async (...args) => {
    h = await harness(...args);
    return h;
  };
}

export function header(call: Received | undefined, name: string): string | undefined {
  const value = call?.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A loopback URL nothing listens on: a port that was just free. */
export async function refusingUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Cuts the connection without an answer (a client sees `socket hang up`, ECONNRESET). */
export const hangUp: Responder = (req) => req.socket.destroy();

/** Never answers; the socket stays open until the server closes. */
export const stall: Responder = () => undefined;

/** Waits (on real I/O, whatever timers are faked) until `condition` holds; fails after `ms`. */
export async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
