import { setTimeout as delay } from 'node:timers/promises';
import { errorCode, NetworkError } from '../../client/errors.js';
import type { HttpResponse, RawBody } from '../../client/http.js';
import type { pam } from '../../client/endpoints.js';
import { paginateCursor } from '../../client/paginate.js';
import type { ContractOf } from '../../contract/projection.js';
import { CommandError, InterruptedError } from '../base-command.js';
import { ExitCode } from '../exit-codes.js';
import { UsageError } from '../prompts.js';
import type { QueryInput } from '../schema-flags.js';
import { checkpointPathFor, removeCheckpoint, writeCheckpoint, type ExportParams } from './checkpoint.js';
import { exportFormatOf, unexpectedExportType } from './content-type.js';
import { checkPageHeaders, rowCountMismatch } from './pages.js';
import { ExportRecordSplitter } from './records.js';
import { checkpointOf, openOutput, START, type ExportState } from './resume.js';
import { fileSink, streamSink, type PageSink } from './sinks.js';

/**
 * `svc pam export` (CLI.md "The audit export"; 01 §4.9 "Audit export"; 04 "Audit export"): the paging loop of
 * the cursor-paged elevation audit export, streamed page by page to stdout, or to a file with a checkpoint
 * after every page (checkpoint.ts, resume.ts); each page checked against its headers (pages.ts).
 */

/** Pages asked for before they are needed: the server prepares the next two while one is written. */
const READ_AHEAD_PAGES = 2;

/** One page request: the export's query plus the cursor to continue from, as the contract types it. */
export type ExportPageQuery = QueryInput<ContractOf<typeof pam.exportAudit>>;

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
  /** Overwrite FILE when it holds a finished export, or start an interrupted one over. */
  force?: boolean;
  allowIncomplete?: boolean;
  follow?: boolean;
  pollSeconds?: number;
  onProgress?: (progress: ExportProgress) => void;
  /** Ctrl-C: the page in flight is dropped, the file cut back to its checkpoint, and exit 130. */
  signal?: AbortSignal;
  /** Waits between polls of --follow (a test passes a fake). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
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

const number = (n: number) => Math.round(n).toLocaleString('en-US');

/** The progress line: rows, pages, rate, settled-through time, and whether --follow is waiting. */
export function describeProgress(progress: ExportProgress, pollSeconds: number): string {
  const settled = progress.settledThrough ? ` · settled through ${progress.settledThrough}` : '';
  const waiting = progress.waiting ? ` · waiting ${pollSeconds} s for the window to settle` : '';
  return `${number(progress.rows)} rows · ${progress.pages} pages · ${number(progress.rowsPerSecond)} rows/s${settled}${waiting}`;
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

function transportError(err: unknown, page: number): NetworkError {
  const code = errorCode(err);
  return new NetworkError(`page ${page}: the connection failed while the page was being read: ${(err as Error).message}`, {
    cause: err,
    ...(code === undefined ? {} : { code }),
  });
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** The interrupt, with the rows and pages the checkpoint holds (the same numbers: both come from `state`). */
function interrupted(state: ExportState, out: string | undefined): InterruptedError {
  const done = `${plural(state.rows, 'row')} in ${plural(state.pages, 'page')}`;
  if (out === undefined) return new InterruptedError(`Interrupted after ${done}`);
  return new InterruptedError(
    `Interrupted after ${done}, all in ${out} and its checkpoint`,
    `Try this: continue with the same command and --resume (the checkpoint is ${checkpointPathFor(out)})`,
  );
}

/**
 * Runs the export: pages follow X-Next-Cursor while X-Has-More is true; each page's bytes stream through a
 * record splitter (the CSV header is kept once, from the first page), are counted against X-Row-Count, and —
 * with `out` — appended to the file, fsynced and checkpointed. Throws a CommandError with exit 8 for a page
 * that does not add up or an unknown schema version, exit 9 when the window is not complete (unless
 * allowIncomplete; with follow it polls instead), exit 2 for a checkpoint that cannot be resumed or a file that
 * would be overwritten, exit 130 when the signal aborts (the file then ends at its checkpoint).
 */
export async function runElevationExport(options: ExportOptions): Promise<ExportSummary> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, signal === undefined ? {} : { signal }));
  const pollMs = Math.max(1, options.pollSeconds ?? 30) * 1000;
  const { params, out, signal } = options;
  const base = exportQuery(params, options.limit);
  if (options.resume && out === undefined) throw new UsageError('--resume needs --out FILE (stdout keeps no checkpoint)', '--resume');

  const file =
    out === undefined ? undefined : await openOutput({ out, params, resume: options.resume === true, force: options.force === true });
  const sink: PageSink = file === undefined ? streamSink(options.stdout ?? process.stdout) : fileSink(file.handle);
  let state: ExportState = file?.state ?? START;
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
      const pages = paginateCursor((cursor) => options.fetchPage({ ...base, ...(cursor === undefined ? {} : { cursor }) }), {
        ...(state.cursor === null ? {} : { cursor: state.cursor }),
        readAhead: { pages: READ_AHEAD_PAGES, discard: (response) => void response.body.dump().catch(() => undefined) },
      });
      for await (const response of pages) {
        signal?.throwIfAborted();
        const page = state.pages + 1;
        let headers;
        try {
          headers = checkPageHeaders(response, page, state.schemaVersion);
          if (exportFormatOf(response.headers) !== params.format) throw unexpectedExportType(response.headers, params.format);
        } catch (err) {
          await response.body.dump().catch(() => undefined);
          throw err;
        }
        // The header came with the first page that had any bytes; every later page's is dropped.
        const splitter = new ExportRecordSplitter(params.format, { dropFirstRecord: params.format === 'csv' && state.bytes > 0 });
        let bodyError: unknown;
        response.body.once('error', (err: unknown) => {
          bodyError ??= err;
        });
        try {
          stopped = !(await sink.write(response.body, splitter));
        } catch (err) {
          await sink.discard(state.bytes);
          // The body's own failure (a reset), whether or not its 'error' event has fired yet.
          const failed = bodyError ?? response.body.errored;
          if (failed !== undefined && failed !== null && !signal?.aborted) throw transportError(failed, page);
          throw err;
        }
        // The reader went away (`| head`): not a failure of the export.
        if (stopped) break;
        if (splitter.rows !== headers.rows) {
          await sink.discard(state.bytes);
          throw rowCountMismatch(page, headers.rows, splitter.rows, out);
        }
        state = {
          cursor: headers.next ?? state.cursor,
          rows: state.rows + splitter.rows,
          pages: page,
          bytes: state.bytes + splitter.bytesOut,
          settledThrough: headers.settledThrough ?? state.settledThrough,
          schemaVersion: headers.version,
        };
        if (file !== undefined) {
          await sink.sync();
          await writeCheckpoint(file.checkpointFile, checkpointOf(params, state));
        }
        complete = headers.complete;
        progress(complete, false);
      }
      if (stopped || complete || options.allowIncomplete) {
        await sink.close();
        if (file !== undefined) await removeCheckpoint(file.checkpointFile);
        return { out: out ?? null, rows: state.rows, pages: state.pages, complete, settledThrough: state.settledThrough, resumed: options.resume === true };
      }
      if (!options.follow)
        throw new CommandError(
          `The export window is not complete yet: rows up to ${state.settledThrough ?? 'the settle watermark'} were exported (${state.rows} rows); newer ones are withheld until they settle`,
          ExitCode.INCOMPLETE,
          'EXPORT_INCOMPLETE',
          out === undefined
            ? 'Try this: run again later, with --follow to wait for the window, or --allow-incomplete to accept a partial window'
            : `Try this: continue later with --resume (the checkpoint ${checkpointPathFor(out)} is kept), or use --follow`,
        );
      progress(false, true);
      await sleep(pollMs, signal);
    }
  } catch (err) {
    // Nothing half-written stays: the file ends at its checkpoint, whatever stopped the export.
    await sink.discard(state.bytes).catch(() => undefined);
    await sink.close().catch(() => undefined);
    if (signal?.aborted) throw interrupted(state, out);
    throw err;
  }
}
