import { open, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../prompts.js';
import {
  checkpointPathFor,
  CheckpointError,
  CHECKPOINT_VERSION,
  paramMismatches,
  readCheckpoint,
  removeCheckpoint,
  writeCheckpoint,
  type ExportCheckpoint,
  type ExportParams,
} from './checkpoint.js';

/** Where an export written to a file stands: what the checkpoint records, and what the file holds. */
export interface ExportState {
  cursor: string | null;
  rows: number;
  pages: number;
  bytes: number;
  settledThrough: string | null;
  schemaVersion: string | null;
}

export const START: ExportState = { cursor: null, rows: 0, pages: 0, bytes: 0, settledThrough: null, schemaVersion: null };

export function checkpointOf(params: ExportParams, state: ExportState, now = new Date()): ExportCheckpoint {
  return { version: CHECKPOINT_VERSION, ...params, ...state, updatedAt: now.toISOString() };
}

export interface OutputRequest {
  out: string;
  params: ExportParams;
  resume: boolean;
  /** Overwrite a finished export, or start an interrupted one over. */
  force: boolean;
}

/** --out FILE must name a file in a directory that exists: exit 2 naming it, before anything is sent. */
export async function checkOutDirectory(out: string): Promise<void> {
  const dir = path.dirname(path.resolve(out));
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`--out ${out}: the directory ${dir} does not exist`, '--out');
}

/** True when FILE exists (as anything). */
async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined)) !== undefined;
}

/** Prepares FILE for a fresh export or a resumed one; returns the handle to append with and the state to
 * continue from. A fresh export writes its checkpoint at once, so one that dies on its first page resumes too. */
export async function openOutput({ out, params, resume, force }: OutputRequest): Promise<{ handle: FileHandle; state: ExportState; checkpointFile: string }> {
  await checkOutDirectory(out);
  const checkpointFile = checkpointPathFor(out);
  let checkpoint: ExportCheckpoint | undefined;
  try {
    checkpoint = await readCheckpoint(checkpointFile);
  } catch (err) {
    if (!(err instanceof CheckpointError)) throw err;
    if (!force) throw new UsageError(`${err.message}; delete it, or give --force, to start the export over`, '--resume');
  }
  if (!resume) {
    if (!force && checkpoint !== undefined)
      throw new UsageError(
        `${checkpointFile} holds an interrupted export: continue it with --resume, or start over with --force`,
        '--resume',
      );
    if (!force && (await exists(out))) throw new UsageError(`${out} exists: give --force to overwrite it`, '--force');
    await removeCheckpoint(checkpointFile);
    await (await open(out, 'w', 0o600)).close();
    const handle = await open(out, 'a');
    await writeCheckpoint(checkpointFile, checkpointOf(params, START));
    return { handle, state: START, checkpointFile };
  }
  if (checkpoint === undefined)
    throw new UsageError(`Nothing to resume: ${checkpointFile} does not exist (the export finished, or never started)`, '--resume');
  const mismatches = paramMismatches(checkpoint, params);
  if (mismatches.length > 0)
    throw new UsageError(
      `The checkpoint ${checkpointFile} is of a different export; give the same parameters to resume it:\n  ${mismatches.join('\n  ')}`,
      '--resume',
    );
  const size = await stat(out).then(
    (info) => info.size,
    () => {
      throw new UsageError(`Cannot resume: ${out} is missing, but ${checkpointFile} says ${checkpoint.bytes} bytes were written`, '--resume');
    },
  );
  if (size < checkpoint.bytes)
    throw new UsageError(
      `Cannot resume: ${out} has ${size} bytes, fewer than the ${checkpoint.bytes} the checkpoint records; delete both files to start over`,
      '--resume',
    );
  const handle = await open(out, 'r+');
  // Whatever follows the last checkpointed page (a page cut off, or written but not checkpointed) goes.
  await handle.truncate(checkpoint.bytes);
  await handle.sync();
  await handle.close();
  const { cursor, rows, pages, bytes, settledThrough, schemaVersion } = checkpoint;
  return { handle: await open(out, 'a'), state: { cursor, rows, pages, bytes, settledThrough, schemaVersion }, checkpointFile };
}
