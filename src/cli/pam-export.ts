import { open, stat, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errorCode, headerValue, NetworkError, type ResponseHeaders } from '../client/errors.js';
import type { HttpResponse, RawBody } from '../client/http.js';
import { paginateCursor } from '../client/paginate.js';
import { CommandError } from './base-command.js';
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
} from './export-checkpoint.js';
import { ExportRecordSplitter } from './export-records.js';
import { ExitCode } from './exit-codes.js';
import { UsageError } from './prompts.js';

/**
 * `svc pam export` (CLI.md "The audit export"; 01 §4.9 "Audit export"; 04 "Audit export"): the cursor-paged
 * elevation audit export, streamed page by page to stdout or to a file with a checkpoint after every page.
 */

/** X-Export-Schema-Version values this CLI can read. */
export const KNOWN_EXPORT_SCHEMA_VERSIONS: readonly string[] = ['1'];

/** Pages asked for before they are needed: the server prepares the next two while one is written. */
const READ_AHEAD_PAGES = 2;

/** One page request: the export's query plus the cursor to continue from. */
export interface ExportPageQuery {
  from: string;
  to: string;
  orgId?: string;
  format: 'csv' | 'jsonl';
  siteId?: string;
  deviceId?: string;
  elevationRequestId?: string;
  eventType?: string;
  limit: number;
  cursor?: string;
}

export interface ExportProgress {
  rows: number;
  pages: number;
  /** Rows of this run (a resumed export counts from where it resumed) per second. */
  rowsPerSecond: number;
  settledThrough: string | null;
  /** The last page said the window is complete. */
  complete: boolean;
  /** Waiting --poll-seconds for the window to settle (--follow). */
  waiting: boolean;
}

export interface ExportOptions {
  params: ExportParams;
  /** Rows per page, 1-1000. */
  limit: number;
  fetchPage(query: ExportPageQuery): Promise<HttpResponse<RawBody>>;
  /** Write here (with a checkpoint FILE.cursor) instead of `stdout`. */
  out?: string | undefined;
  /** Where the bytes go without `out` (left open). */
  stdout?: NodeJS.WritableStream;
  resume?: boolean;
  allowIncomplete?: boolean;
  follow?: boolean;
  pollSeconds?: number;
  onProgress?: (progress: ExportProgress) => void;
  /** Waits between polls of --follow (a test passes a fake). */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export interface ExportSummary {
  out: string | null;
  rows: number;
  pages: number;
  complete: boolean;
  settledThrough: string | null;
  resumed: boolean;
}

interface State {
  cursor: string | null;
  rows: number;
  pages: number;
  bytes: number;
  settledThrough: string | null;
  schemaVersion: string | null;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isTrue(headers: ResponseHeaders, name: string): boolean {
  return headerValue(headers, name)?.trim().toLowerCase() === 'true';
}

/** The query of the export's parameters (no cursor). */
export function exportQuery(params: ExportParams, limit: number): ExportPageQuery {
  const { filters } = params;
  return {
    from: params.from,
    to: params.to,
    format: params.format,
    limit,
    ...(params.orgId === null ? {} : { orgId: params.orgId }),
    ...(filters.siteId === null ? {} : { siteId: filters.siteId }),
    ...(filters.deviceId === null ? {} : { deviceId: filters.deviceId }),
    ...(filters.elevationRequestId === null ? {} : { elevationRequestId: filters.elevationRequestId }),
    ...(filters.eventType === null ? {} : { eventType: filters.eventType }),
  };
}

/** Appends to the export file through one handle opened for appending (O_APPEND), so after the file is cut
 * back to the checkpoint the next write lands right there. `idle()` waits for a write still in flight (the
 * stream may be destroyed with one pending) before the file is cut back. */
function appender(handle: FileHandle): { stream: Writable; idle(): Promise<void> } {
  let pending: Promise<unknown> = Promise.resolve();
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const write = handle.write(chunk);
      pending = write.catch(() => undefined);
      write.then(
        () => callback(),
        (err: Error) => callback(err),
      );
    },
  });
  return { stream, idle: async () => void (await pending) };
}

/**
 * Writes pages into one stream that outlives them (stdout), honouring backpressure. Not a pipeline destination:
 * a pipeline per page would add listeners to stdout for every page and never remove them.
 */
function sharedSink(destination: NodeJS.WritableStream) {
  let failure: Error | undefined;
  const onError = (err: unknown) => {
    failure ??= err instanceof Error ? err : new Error(String(err));
  };
  destination.on('error', onError);
  const drained = () =>
    new Promise<void>((resolve, reject) => {
      const done = () => {
        destination.off('error', fail);
        resolve();
      };
      const fail = (err: unknown) => {
        destination.off('drain', done);
        reject(err instanceof Error ? err : new Error(String(err)));
      };
      destination.once('drain', done);
      destination.once('error', fail);
    });
  return {
    async write(source: AsyncIterable<Buffer>): Promise<void> {
      for await (const chunk of source) {
        if (failure !== undefined) throw failure;
        if (!destination.write(chunk)) await drained();
      }
      if (failure !== undefined) throw failure;
    },
    release(): void {
      destination.off('error', onError);
    },
  };
}

function transportError(err: unknown, page: number): NetworkError {
  const code = errorCode(err);
  return new NetworkError(
    `page ${page}: the connection failed while the page was being read: ${(err as Error).message}`,
    { cause: err, ...(code === undefined ? {} : { code }) },
  );
}

function isBrokenPipe(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED')
  );
}

/** Prepares FILE for a fresh export or a resumed one; returns the open handle and the state to continue from. */
async function openOutput(
  options: ExportOptions,
  out: string,
): Promise<{ handle: FileHandle; state: State; checkpointFile: string }> {
  const checkpointFile = checkpointPathFor(out);
  let checkpoint: ExportCheckpoint | undefined;
  try {
    checkpoint = await readCheckpoint(checkpointFile);
  } catch (err) {
    if (err instanceof CheckpointError)
      throw new UsageError(`${err.message}; delete it to start the export over`, '--resume');
    throw err;
  }
  if (!options.resume) {
    if (checkpoint !== undefined)
      throw new UsageError(
        `${checkpointFile} holds an interrupted export: continue it with --resume, or delete ${checkpointFile} to start over`,
        '--resume',
      );
    await (await open(out, 'w', 0o600)).close();
    const handle = await open(out, 'a');
    const state: State = { cursor: null, rows: 0, pages: 0, bytes: 0, settledThrough: null, schemaVersion: null };
    // A checkpoint from the start, so an export that dies on its first page can be resumed too.
    await writeCheckpoint(checkpointFile, checkpointOf(options.params, state));
    return { handle, state, checkpointFile };
  }
  if (checkpoint === undefined)
    throw new UsageError(
      `Nothing to resume: ${checkpointFile} does not exist (the export finished, or never started)`,
      '--resume',
    );
  const mismatches = paramMismatches(checkpoint, options.params);
  if (mismatches.length > 0)
    throw new UsageError(
      `The checkpoint ${checkpointFile} is of a different export; give the same parameters to resume it:\n  ${mismatches.join('\n  ')}`,
      '--resume',
    );
  let size: number;
  try {
    size = (await stat(out)).size;
  } catch {
    throw new UsageError(
      `Cannot resume: ${out} is missing, but ${checkpointFile} says ${checkpoint.bytes} bytes were written`,
      '--resume',
    );
  }
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
  const appending = await open(out, 'a');
  const { cursor, rows, pages, bytes, settledThrough, schemaVersion } = checkpoint;
  return { handle: appending, state: { cursor, rows, pages, bytes, settledThrough, schemaVersion }, checkpointFile };
}

function checkpointOf(params: ExportParams, state: State, now = new Date()): ExportCheckpoint {
  return { version: CHECKPOINT_VERSION, ...params, ...state, updatedAt: now.toISOString() };
}

/**
 * Runs the export: pages follow X-Next-Cursor while X-Has-More is true; each page's bytes stream through a
 * record splitter (the CSV header is kept once, from the first page), are counted against X-Row-Count, and —
 * with `out` — appended to the file, fsynced and checkpointed. Throws a CommandError with exit 8 for a page
 * that does not add up or an unknown schema version, exit 9 when the window is not complete (unless
 * allowIncomplete; with follow it polls instead), exit 2 for a checkpoint that cannot be resumed.
 */
export async function runElevationExport(options: ExportOptions): Promise<ExportSummary> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? sleepFor;
  const pollMs = Math.max(1, options.pollSeconds ?? 30) * 1000;
  const { params } = options;
  const base = exportQuery(params, options.limit);
  const out = options.out;
  if (options.resume && out === undefined)
    throw new UsageError('--resume needs --out FILE (stdout keeps no checkpoint)', '--resume');

  const file = out === undefined ? undefined : await openOutput(options, out);
  const stdout = file === undefined ? sharedSink(options.stdout ?? process.stdout) : undefined;
  let state: State = file?.state ?? {
    cursor: null,
    rows: 0,
    pages: 0,
    bytes: 0,
    settledThrough: null,
    schemaVersion: null,
  };
  const resumed = options.resume === true;
  const started = now();
  const startRows = state.rows;
  const progress = (complete: boolean, waiting: boolean) => {
    const seconds = Math.max((now() - started) / 1000, 0.001);
    options.onProgress?.({
      rows: state.rows,
      pages: state.pages,
      rowsPerSecond: (state.rows - startRows) / seconds,
      settledThrough: state.settledThrough,
      complete,
      waiting,
    });
  };

  try {
    for (;;) {
      let complete = false;
      let stopped = false;
      const pages = paginateCursor(
        (cursor) => options.fetchPage({ ...base, ...(cursor === undefined ? {} : { cursor }) }),
        {
          ...(state.cursor === null ? {} : { cursor: state.cursor }),
          readAhead: {
            pages: READ_AHEAD_PAGES,
            discard: (response) => void response.body.dump().catch(() => undefined),
          },
        },
      );
      for await (const response of pages) {
        const page = state.pages + 1;
        const version = headerValue(response.headers, 'x-export-schema-version')?.trim();
        if (version === undefined || !KNOWN_EXPORT_SCHEMA_VERSIONS.includes(version)) {
          await response.body.dump().catch(() => undefined);
          throw new CommandError(
            `page ${page}: export schema version ${version ?? '(none: no X-Export-Schema-Version header)'} is not one this svc knows (${KNOWN_EXPORT_SCHEMA_VERSIONS.join(', ')})`,
            ExitCode.SERVER,
            'EXPORT_SCHEMA_UNSUPPORTED',
            'Try this: upgrade svc to a release that reads this export schema version',
          );
        }
        if (state.schemaVersion !== null && version !== state.schemaVersion) {
          await response.body.dump().catch(() => undefined);
          throw new CommandError(
            `page ${page}: export schema version ${version}, but the pages written so far are version ${state.schemaVersion}`,
            ExitCode.SERVER,
            'EXPORT_SCHEMA_CHANGED',
            'Start the export over into a new file',
          );
        }
        const expectedText = headerValue(response.headers, 'x-row-count')?.trim();
        const expected = expectedText !== undefined && /^\d+$/.test(expectedText) ? Number(expectedText) : undefined;
        if (expected === undefined) {
          await response.body.dump().catch(() => undefined);
          throw new CommandError(
            `page ${page}: the server sent no valid X-Row-Count header (${expectedText ?? 'none'})`,
            ExitCode.SERVER,
            'EXPORT_ROW_COUNT_MISSING',
          );
        }

        // The header came with the first page that had any bytes; every later page's is dropped.
        const splitter = new ExportRecordSplitter(params.format, {
          dropFirstRecord: params.format === 'csv' && state.bytes > 0,
        });
        let bodyError: unknown;
        response.body.once('error', (err: unknown) => {
          bodyError ??= err;
        });
        const sink = file === undefined ? undefined : appender(file.handle);
        try {
          if (sink !== undefined) await pipeline(response.body, splitter, sink.stream);
          else if (stdout !== undefined)
            await pipeline(response.body, splitter, (source: AsyncIterable<Buffer>) => stdout.write(source));
        } catch (err) {
          if (file !== undefined) {
            await sink?.idle();
            await file.handle.truncate(state.bytes).catch(() => undefined);
          }
          if (bodyError !== undefined) throw transportError(bodyError, page);
          if (file === undefined && isBrokenPipe(err)) {
            // The reader went away (`| head`): not a failure of the export.
            stopped = true;
            break;
          }
          throw err;
        }
        if (splitter.rows !== expected) {
          if (file !== undefined) await file.handle.truncate(state.bytes);
          throw new CommandError(
            `page ${page}: expected ${expected} rows (X-Row-Count), got ${splitter.rows}`,
            ExitCode.SERVER,
            'EXPORT_ROW_COUNT_MISMATCH',
            file === undefined ? undefined : `${out ?? ''} holds the pages before it; try again with --resume`,
          );
        }
        const next = headerValue(response.headers, 'x-next-cursor')?.trim();
        state = {
          cursor: next === undefined || next === '' ? state.cursor : next,
          rows: state.rows + splitter.rows,
          pages: page,
          bytes: state.bytes + splitter.bytesOut,
          settledThrough: headerValue(response.headers, 'x-settled-through') ?? state.settledThrough,
          schemaVersion: version,
        };
        if (file !== undefined) {
          await file.handle.sync();
          await writeCheckpoint(file.checkpointFile, checkpointOf(params, state));
        }
        complete = isTrue(response.headers, 'x-window-complete');
        progress(complete, false);
      }
      if (stopped || complete || options.allowIncomplete) {
        if (file !== undefined) {
          await file.handle.close();
          await removeCheckpoint(file.checkpointFile);
        }
        return {
          out: out ?? null,
          rows: state.rows,
          pages: state.pages,
          complete,
          settledThrough: state.settledThrough,
          resumed,
        };
      }
      if (!options.follow) {
        throw new CommandError(
          `The export window is not complete yet: rows up to ${state.settledThrough ?? 'the settle watermark'} were exported (${state.rows} rows); newer ones are withheld until they settle`,
          ExitCode.INCOMPLETE,
          'EXPORT_INCOMPLETE',
          out === undefined
            ? 'Try this: run again later, with --follow to wait for the window, or --allow-incomplete to accept a partial window'
            : `Try this: continue later with --resume (the checkpoint ${checkpointPathFor(out)} is kept), or use --follow`,
        );
      }
      progress(false, true);
      await sleep(pollMs);
    }
  } catch (err) {
    if (file !== undefined) await file.handle.close().catch(() => undefined);
    throw err;
  } finally {
    stdout?.release();
  }
}
