import fs from 'node:fs';
import path from 'node:path';
import { OpsError } from './errors.js';
import { PID_FILE, isAlive, readPidFile } from './lock.js';

export interface StopResult {
  pid: number;
  /** The URL the server recorded, or null (a pid file from an older svc). */
  url: string | null;
  dataDir: string;
  /** How long the server took to exit after SIGTERM. */
  waitedMs: number;
}

/** Whether the process looks like `svc server start`, so a pid file left behind by a crash and a pid reused by
 * another program later never get that program signalled. Read from /proc where there is one; elsewhere (or
 * when it cannot be read) the pid file is believed. */
function looksLikeSvcServer(pid: number): boolean {
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true;
  }
  const args = cmdline.split('\0');
  if (args.every((a) => a === '')) return true; // exiting: no arguments to read any more
  return args.some((arg, i) => arg === 'server' && args[i + 1] === 'start');
}

function removeIfNames(dataDir: string, pid: number): void {
  if (readPidFile(dataDir)?.pid === pid) fs.rmSync(path.join(dataDir, PID_FILE), { force: true });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `svc server stop`: SIGTERM to the server recorded in the data dir's pid file, then waits (at most
 * `timeoutMs`) for it to exit: it stops accepting, finishes the requests in flight, closes the database and
 * removes its pid file (server.ts). Refusals: no server running (exit 5; a stale pid file is removed), the pid
 * file held by init, migrate or restore (exit 6), a server of another user (exit 4), still running at the
 * deadline (exit 8).
 */
export async function stopServer(dataDir: string, options: { timeoutMs: number; pollMs?: number }): Promise<StopResult> {
  const record = readPidFile(dataDir);
  const notRunning = (extra?: string) =>
    new OpsError(`No server is running against ${dataDir}`, 5, 'SERVER_NOT_RUNNING', extra);
  if (!record) throw notRunning();
  const { pid } = record;
  if (pid === process.pid || !isAlive(pid) || !looksLikeSvcServer(pid)) {
    removeIfNames(dataDir, pid);
    throw notRunning(`Removed the stale ${PID_FILE}: process ${pid} is not an svc server.`);
  }
  if (record.command !== undefined && record.command !== 'start') {
    throw new OpsError(
      `\`svc server ${record.command}\` (pid ${pid}) holds ${dataDir}, not a server`,
      6,
      'SERVER_BUSY',
      'Let it finish; it releases the data dir when it is done.',
    );
  }

  const started = Date.now();
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPERM') {
      throw new OpsError(
        `Not permitted to stop the server (pid ${pid}): it runs as another user`,
        4,
        'NOT_PERMITTED',
        'Run `svc server stop` as that user (e.g. sudo -u svc …), or `systemctl stop` its service.',
      );
    }
    if (code !== 'ESRCH') throw err;
  }
  const pollMs = options.pollMs ?? 100;
  while (isAlive(pid)) {
    if (Date.now() - started >= options.timeoutMs) {
      throw new OpsError(
        `The server (pid ${pid}) is still running ${Math.round(options.timeoutMs / 1000)} s after SIGTERM`,
        8,
        'STOP_TIMEOUT',
        `It may still be finishing long requests (it cuts them off after SVC_SHUTDOWN_TIMEOUT_MS): wait and run \`svc server stop\` again, or end it with \`kill -KILL ${pid}\`.`,
      );
    }
    await sleep(pollMs);
  }
  // The server removes it on a graceful exit; one that died on the way leaves it.
  removeIfNames(dataDir, pid);
  return { pid, url: record.url ?? null, dataDir, waitedMs: Date.now() - started };
}
