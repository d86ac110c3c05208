import { open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ElevationEventTypeSchema } from '../../contract/pam.js';

/**
 * The checkpoint of an export written to a file (CLI.md "The audit export"): `FILE.cursor`, rewritten
 * atomically (temporary file, fsync, rename) after each page has been appended to FILE and fsynced. It says
 * how many bytes of FILE are whole pages (`bytes`) and where the next page starts (`cursor`), so `--resume`
 * cuts FILE back to `bytes` — dropping a page that was half written, or written but not yet checkpointed,
 * when the process died — and continues from `cursor`: no row lost, none doubled.
 */
export const CHECKPOINT_VERSION = 1;

export const ExportFiltersSchema = z.object({
  siteId: z.string().nullable(),
  deviceId: z.string().nullable(),
  elevationRequestId: z.string().nullable(),
  eventType: ElevationEventTypeSchema.nullable(),
});
export type ExportFilters = z.infer<typeof ExportFiltersSchema>;

/** What defines an export's rows: a resumed export must ask for exactly these. (The page size does not: any
 * page size yields the same bytes.) */
export const ExportParamsSchema = z.object({
  from: z.string(),
  to: z.string(),
  orgId: z.string().nullable(),
  format: z.enum(['csv', 'jsonl']),
  filters: ExportFiltersSchema,
});
export type ExportParams = z.infer<typeof ExportParamsSchema>;

export const ExportCheckpointSchema = ExportParamsSchema.extend({
  version: z.literal(CHECKPOINT_VERSION),
  /** X-Next-Cursor after the last checkpointed page; null before the first. */
  cursor: z.string().nullable(),
  /** Data rows in FILE (CSV header excluded). */
  rows: z.number().int().nonnegative(),
  pages: z.number().int().nonnegative(),
  /** Length of FILE up to and including the last checkpointed page. */
  bytes: z.number().int().nonnegative(),
  /** X-Settled-Through of the last page. */
  settledThrough: z.string().nullable(),
  /** X-Export-Schema-Version of the pages written so far; a resumed export must get the same. */
  schemaVersion: z.string().nullable(),
  updatedAt: z.string(),
});
export type ExportCheckpoint = z.infer<typeof ExportCheckpointSchema>;

export function checkpointPathFor(file: string): string {
  return `${file}.cursor`;
}

export class CheckpointError extends Error {}

/** The checkpoint, or undefined when there is none; one that does not parse is a CheckpointError. */
export async function readCheckpoint(file: string): Promise<ExportCheckpoint | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CheckpointError(`Cannot read the checkpoint ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    throw new CheckpointError(`The checkpoint ${file} is not JSON`);
  }
  const parsed = ExportCheckpointSchema.safeParse(json);
  if (!parsed.success)
    throw new CheckpointError(
      `The checkpoint ${file} is not an export checkpoint this svc can read: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** Writes the checkpoint atomically: a temporary file next to it, fsynced, renamed over it, directory fsynced. */
export async function writeCheckpoint(file: string, checkpoint: ExportCheckpoint): Promise<void> {
  const temporary = `${file}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(checkpoint, null, 2)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  await syncDirectory(path.dirname(file));
}

export async function removeCheckpoint(file: string): Promise<void> {
  await rm(file, { force: true });
  await rm(`${file}.tmp`, { force: true });
}

/** Makes a rename durable; not every platform can open a directory, which is then left to the OS. */
async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Windows and some file systems refuse: the rename is still atomic, only its durability is the OS's.
  } finally {
    await handle?.close();
  }
}

const sameInstant = (a: string, b: string) =>
  a === b || (Date.parse(a) === Date.parse(b) && !Number.isNaN(Date.parse(a)));

/** The parameters a resumed export gives differently from the checkpoint, as `--flag: checkpoint X, given Y`. */
export function paramMismatches(checkpoint: ExportParams, given: ExportParams): string[] {
  const out: string[] = [];
  const show = (value: string | null) => (value === null ? '(none)' : value);
  const check = (flag: string, a: string | null, b: string | null, same = (x: string, y: string) => x === y) => {
    if (a === null || b === null ? a !== b : !same(a, b))
      out.push(`${flag}: the checkpoint has ${show(a)}, given ${show(b)}`);
  };
  check('--from', checkpoint.from, given.from, sameInstant);
  check('--to', checkpoint.to, given.to, sameInstant);
  check('--org-id', checkpoint.orgId, given.orgId);
  check('--format', checkpoint.format, given.format);
  check('--site-id', checkpoint.filters.siteId, given.filters.siteId);
  check('--device-id', checkpoint.filters.deviceId, given.filters.deviceId);
  check('--elevation-request-id', checkpoint.filters.elevationRequestId, given.filters.elevationRequestId);
  check('--event-type', checkpoint.filters.eventType, given.filters.eventType);
  return out;
}
