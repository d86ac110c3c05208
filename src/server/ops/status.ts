import fs from 'node:fs';
import path from 'node:path';
import type { ServerConfig } from '../config.js';
import { SECRETS_FILE } from '../security/server-secrets.js';
import { VERSION } from '../version.js';
import { fileSize, hasTable, openExisting, schemaState, serverMeta, shippedMigrations } from './database.js';
import { OpsError } from './errors.js';
import { localBaseUrl } from './address.js';
import { runningServer } from './lock.js';

export { localBaseUrl } from './address.js';

export interface ServerStatus {
  /** This build of svc. */
  version: string;
  dataDir: string;
  database: {
    file: string;
    exists: boolean;
    /** Bytes of the database file and of its write-ahead log (null when there is no database). */
    sizeBytes: number | null;
    walBytes: number | null;
    /** Why the database could not be read, when it could not. */
    error: string | null;
  };
  schema: {
    /** Migrations applied to the database (null when it cannot be read). */
    version: number | null;
    /** Migrations this build ships: the schema version it expects. */
    shipped: number;
    latest: string | null;
    pending: string[];
    /** Migrations applied by a newer svc, which this build does not know. */
    unknown: number;
  };
  initializedAt: string | null;
  /** Where the server keys come from: the data dir's file, the environment, or not created yet. */
  secrets: 'file' | 'environment' | 'missing';
  jobs: { pending: number; running: number; dead: number } | null;
  server: {
    /** The pid in `<dataDir>/server.pid`, when that process is alive. */
    pid: number | null;
    /** Where /health was asked: --base-url or --port, else the URL the running server recorded in its pid
     * file, else HOST and PORT of the configuration. */
    url: string;
    reachable: boolean;
    health: Record<string, unknown> | null;
    ready: Record<string, unknown> | null;
    error: string | null;
  };
}

export interface StatusOptions {
  /** Where to probe /health and /health/ready; default: the URL in the pid file of the running server, else
   * HOST and PORT of the configuration. */
  baseUrl?: string | undefined;
  /** A port asked for explicitly (`--port`): probed on HOST, before the pid file's URL. */
  port?: number;
  timeoutMs?: number;
}

async function probe(
  url: string,
  timeoutMs: number,
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  const text = await res.text();
  let body: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = null;
  }
  return { status: res.status, body };
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    if (cause instanceof Error && 'code' in cause)
      return `${err.message}: ${String((cause as NodeJS.ErrnoException).code)}`;
    return err.message;
  }
  return String(err);
}

/** `svc server status`: what the data dir holds (read without a server) and, if one answers, its health. */
export async function serverStatus(config: ServerConfig, options: StatusOptions = {}): Promise<ServerStatus> {
  const file = config.databaseFile;
  const exists = fs.existsSync(file);
  const holder = runningServer(config.dataDir);
  const baseUrl =
    options.baseUrl ??
    (options.port === undefined ? undefined : localBaseUrl(config.host, options.port)) ??
    holder?.url ??
    localBaseUrl(config.host, config.port);
  const status: ServerStatus = {
    version: VERSION,
    dataDir: config.dataDir,
    database: {
      file,
      exists,
      sizeBytes: exists ? fileSize(file) : null,
      walBytes: exists ? fileSize(`${file}-wal`) : null,
      error: null,
    },
    schema: { version: null, shipped: shippedMigrations().length, latest: null, pending: [], unknown: 0 },
    initializedAt: null,
    secrets: fs.existsSync(path.join(config.dataDir, SECRETS_FILE))
      ? 'file'
      : config.secrets.jwtSecret && config.secrets.encryptionKey && config.secrets.enrollmentPepper
        ? 'environment'
        : 'missing',
    jobs: null,
    server: {
      pid: holder?.pid ?? null,
      url: baseUrl,
      reachable: false,
      health: null,
      ready: null,
      error: null,
    },
  };

  if (!exists) {
    status.database.error = 'not found';
  } else {
    try {
      const sqlite = openExisting(file);
      try {
        const schema = schemaState(sqlite);
        status.schema = schema;
        status.initializedAt = serverMeta(sqlite, 'initializedAt');
        if (hasTable(sqlite, 'jobs')) {
          const counts = sqlite
            .prepare(
              "SELECT status, count(*) AS n FROM jobs WHERE status IN ('pending', 'running', 'dead') GROUP BY status",
            )
            .all() as { status: string; n: number }[];
          const n = (s: string) => counts.find((c) => c.status === s)?.n ?? 0;
          status.jobs = { pending: n('pending'), running: n('running'), dead: n('dead') };
        }
      } finally {
        sqlite.close();
      }
    } catch (err) {
      status.database.error = err instanceof OpsError ? err.message : errorText(err);
    }
  }

  const timeoutMs = options.timeoutMs ?? 2000;
  try {
    const [health, ready] = await Promise.all([
      probe(new URL('/health', baseUrl).href, timeoutMs),
      probe(new URL('/health/ready', baseUrl).href, timeoutMs),
    ]);
    status.server.reachable = true;
    status.server.health = health.body ?? { httpStatus: health.status };
    status.server.ready = ready.body ?? { httpStatus: ready.status };
    if (ready.status !== 200) status.server.error = `/health/ready answered HTTP ${ready.status}`;
  } catch (err) {
    status.server.error = errorText(err);
  }
  return status;
}

/** The exit code `svc server status` ends with: 8 when the database is missing or unreadable, or a server
 * answers but is not ready; 0 otherwise (no server answering is a normal offline status). */
export function statusExitCode(status: ServerStatus): 0 | 8 {
  if (!status.database.exists || status.database.error !== null) return 8;
  if (status.server.reachable && status.server.error !== null) return 8;
  return 0;
}
