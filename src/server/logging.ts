import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyServerOptions } from 'fastify';
import { PRIVATE_DIR_MODE, openPrivateAppend } from './ops/files.js';

const SECRET_QUERY_KEYS = /token|key|code|secret|password|state|cursor/i;

/** The request URL with the values of secret-looking query parameters replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const key of [...params.keys()]) if (SECRET_QUERY_KEYS.test(key)) params.set(key, '[redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}

/** pino settings: request lines carry method, URL (secrets redacted), address and status; never headers
 * such as Authorization, X-API-Key or cookies, and never bodies (passwords, keys). */
export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  return {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.refreshToken', '*.accessToken'],
      censor: '[redacted]',
    },
    serializers: {
      req(request: { method: string; url: string; ip?: string; id?: string }) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}

/** Where the request log goes: a file opened for appending (0600; rotate it with logrotate's `copytruncate`,
 * which the append mode makes safe), or stderr. Writes are synchronous, as pino's are to stderr: a line is
 * on disk before the process can exit. */
export interface LogDestination {
  stream: Writable;
  /** The file, or null for stderr. */
  file: string | null;
  close(): void;
}

export function openLogDestination(file: string | null): LogDestination {
  if (file === null) return { stream: process.stderr, file: null, close: () => undefined };
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  let fd: number | null = openPrivateAppend(file);
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      try {
        if (fd !== null) fs.writeSync(fd, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
        callback();
      } catch (err) {
        callback(err as Error);
      }
    },
  });
  return {
    stream,
    file,
    close() {
      if (fd === null) return;
      fs.closeSync(fd);
      fd = null;
    },
  };
}
