import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { OpsError } from './errors.js';
import { PRIVATE_FILE_MODE, ensurePrivateDir } from './files.js';

/** The pid file a process holds in the data dir while it runs against it: `svc server start` for as long as
 * it serves, and `init`, `migrate` and `restore` while they change the database. */
export const PID_FILE = 'server.pid';

/** What the pid file records, as one JSON object (`svc server status` and `stop` read it). An svc before this
 * one wrote the bare pid: read as `{ pid }`. */
const PidFileSchema = z.object({
  pid: z.number().int().positive(),
  /** The svc command holding the data dir: start, init, migrate, restore. */
  command: z.string().optional(),
  /** Where a server answers (loopback for a wildcard address), from its bound socket. */
  url: z.string().optional(),
  dataDir: z.string().optional(),
  startedAt: z.string().optional(),
});
export type PidFile = z.infer<typeof PidFileSchema>;

/** Lock files this process holds: a pid file naming our own pid is ours only if we took it, otherwise it
 * was left by an earlier process that had the same pid (a container's pid 1). */
const heldHere = new Set<string>();

export class ServerRunningError extends OpsError {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    command = 'start',
  ) {
    super(
      command === 'start'
        ? `A server (pid ${pid}) is running against ${dataDir}`
        : `\`svc server ${command}\` (pid ${pid}) is running against ${dataDir}`,
      6,
      'SERVER_RUNNING',
      command === 'start'
        ? `Stop it first (\`svc server stop\`, SIGTERM or Ctrl-C), or remove ${path.join(dataDir, PID_FILE)} if process ${pid} is not svc.`
        : `Wait for it to finish, or remove ${path.join(dataDir, PID_FILE)} if process ${pid} is not svc.`,
    );
  }
}

export interface ServerLock {
  readonly file: string;
  readonly pid: number;
  /** Removes the pid file if it still names this process. Safe to call twice. */
  release(): void;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid file's record, or undefined when there is none or it is unreadable as one. */
export function readPidFile(dataDir: string): PidFile | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dataDir, PID_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const pid = Number.parseInt(trimmed, 10);
    return pid > 0 ? { pid } : undefined;
  }
  try {
    const parsed = PidFileSchema.safeParse(JSON.parse(trimmed));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The live process holding the data dir, if any (a pid file naming a dead process is stale and ignored). */
export function runningServer(dataDir: string): PidFile | undefined {
  const record = readPidFile(dataDir);
  if (record === undefined) return undefined;
  if (record.pid === process.pid) return heldHere.has(path.join(dataDir, PID_FILE)) ? record : undefined;
  return isAlive(record.pid) ? record : undefined;
}

/** Takes the data dir's pid file for this process (creating the data dir 0700, the file 0600), replacing a
 * stale one; throws ServerRunningError while another live process holds it. */
export function acquireServerLock(
  dataDir: string,
  info: { command: string; url?: string | undefined } = { command: 'start' },
): ServerLock {
  const file = path.join(dataDir, PID_FILE);
  ensurePrivateDir(dataDir);
  const record: PidFile = {
    pid: process.pid,
    command: info.command,
    ...(info.url ? { url: info.url } : {}),
    dataDir,
    startedAt: new Date().toISOString(),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, `${JSON.stringify(record)}\n`, { flag: 'wx', mode: PRIVATE_FILE_MODE });
      fs.chmodSync(file, PRIVATE_FILE_MODE);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
    }
    const holder = runningServer(dataDir);
    if (holder) throw new ServerRunningError(dataDir, holder.pid, holder.command);
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
      if (readPidFile(dataDir)?.pid === process.pid) fs.rmSync(file, { force: true });
    },
  };
}
