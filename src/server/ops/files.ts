import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The data dir and everything the server writes (database and its -wal/-shm, keys, pid file, log, backups and
 * the copies a restore keeps) are private to the server's user whatever the umask: the dir 0700, files 0600.
 * A creation mode is filtered by the umask, so every mode here is also set with chmod.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Sets the mode exactly; a file that is gone, or that belongs to another user (EPERM: it is theirs to
 * protect), is left as it is. */
export function setMode(file: string, mode: number): void {
  try {
    if ((fs.statSync(file).mode & 0o777) !== mode) fs.chmodSync(file, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EPERM') throw err;
  }
}

/** Creates the directory (and its parents) if needed and makes it 0700; returns whether it was created. */
export function ensurePrivateDir(dir: string): boolean {
  const created = !fs.existsSync(dir);
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  setMode(dir, PRIVATE_DIR_MODE);
  return created;
}

/** Creates an empty file 0600 if it does not exist, and makes an existing one 0600. */
export function ensurePrivateFile(file: string): void {
  const fd = fs.openSync(file, 'a', PRIVATE_FILE_MODE);
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens a file for appending (a log), created 0600. */
export function openPrivateAppend(file: string): number {
  const fd = fs.openSync(file, 'a', PRIVATE_FILE_MODE);
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') {
      fs.closeSync(fd);
      throw err;
    }
  }
  return fd;
}

/** A temp file beside `target`, so the final rename stays on one file system and is atomic. */
export function tempBeside(target: string): string {
  return path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
}

export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function fsyncDir(dir: string): void {
  try {
    fsyncFile(dir);
  } catch {
    // Not every platform can fsync a directory; the rename is still atomic.
  }
}

/** Writes `text` to `file` 0600 through a temp file and a rename: the file is either the old content or the
 * new one. With `exclusive`, an existing file is an EEXIST error and is left as it is (written in place then). */
export function writePrivateFile(file: string, text: string, options: { exclusive?: boolean } = {}): void {
  if (options.exclusive) {
    fs.writeFileSync(file, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    fs.chmodSync(file, PRIVATE_FILE_MODE);
    fsyncFile(file);
    fsyncDir(path.dirname(file));
    return;
  }
  const temp = tempBeside(file);
  try {
    fs.writeFileSync(temp, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    fs.chmodSync(temp, PRIVATE_FILE_MODE);
    fsyncFile(temp);
    fs.renameSync(temp, file);
    fsyncDir(path.dirname(file));
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
}
