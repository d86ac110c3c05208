import fs from 'node:fs';
import path from 'node:path';
import { OpsError } from './errors.js';

/** The pid file a running server holds in its data dir (`svc server restore` and `init` refuse while it
 * names a live process). */
export const PID_FILE = 'server.pid';

/** Lock files this process holds: a pid file naming our own pid is ours only if we took it, otherwise it
 * was left by an earlier process that had the same pid (a container's pid 1). */
const heldHere = new Set<string>();

export class ServerRunningError extends OpsError {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `A server (pid ${pid}) is running against ${dataDir}`,
      6,
      'SERVER_RUNNING',
      `Stop it first (SIGTERM or Ctrl-C), or remove ${path.join(dataDir, PID_FILE)} if process ${pid} is not svc.`,
    );
  }
}

export interface ServerLock {
  readonly file: string;
  readonly pid: number;
  /** Removes the pid file if it still names this process. Safe to call twice. */
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(file: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The live server holding the data dir, if any (a pid file naming a dead process is stale and ignored). */
export function runningServer(dataDir: string): { pid: number } | undefined {
  const file = path.join(dataDir, PID_FILE);
  const pid = readPid(file);
  if (pid === undefined) return undefined;
  if (pid === process.pid) return heldHere.has(file) ? { pid } : undefined;
  return isAlive(pid) ? { pid } : undefined;
}

/** Takes the data dir's pid file for this process, replacing a stale one; throws ServerRunningError while
 * another live process holds it. */
export function acquireServerLock(dataDir: string): ServerLock {
  const file = path.join(dataDir, PID_FILE);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
    }
    const holder = runningServer(dataDir);
    if (holder) throw new ServerRunningError(dataDir, holder.pid);
    fs.rmSync(file, { force: true });
  }
  heldHere.add(file);
  let released = false;
  return {
    file,
    pid: process.pid,
    release() {
      if (released) return;
      released = true;
      heldHere.delete(file);
      if (readPid(file) === process.pid) fs.rmSync(file, { force: true });
    },
  };
}
