import { headerValue } from '../../client/errors.js';
import type { HttpResponse, RawBody } from '../../client/http.js';
import { CommandError } from '../base-command.js';
import { ExitCode } from '../exit-codes.js';

/** The checks of one page of a cursor export against its headers (01 §4.9 "Audit export"; CLI.md "The audit
 * export"): the schema version before anything is written, the row count after. */

/** X-Export-Schema-Version values this CLI can read. */
export const KNOWN_EXPORT_SCHEMA_VERSIONS: readonly string[] = ['1'];

export interface PageHeaders {
  version: string;
  /** X-Row-Count: the rows the page must hold. */
  rows: number;
  /** X-Next-Cursor, when the server sent one. */
  next: string | undefined;
  settledThrough: string | undefined;
  /** X-Window-Complete: every row of the window up to --to has settled. */
  complete: boolean;
}

/** Reads and checks a page's headers before its body is written: exit 8 for a schema version this svc does
 * not know or one that differs from the pages written so far, or for a missing row count. */
export function checkPageHeaders(response: HttpResponse<RawBody>, page: number, writtenVersion: string | null): PageHeaders {
  const header = (name: string) => headerValue(response.headers, name)?.trim();
  const version = header('x-export-schema-version');
  if (version === undefined || !KNOWN_EXPORT_SCHEMA_VERSIONS.includes(version))
    throw new CommandError(
      `page ${page}: export schema version ${version ?? '(none: no X-Export-Schema-Version header)'} is not one this svc knows (${KNOWN_EXPORT_SCHEMA_VERSIONS.join(', ')})`,
      ExitCode.SERVER,
      'EXPORT_SCHEMA_UNSUPPORTED',
      'Try this: upgrade svc to a release that reads this export schema version',
    );
  if (writtenVersion !== null && version !== writtenVersion)
    throw new CommandError(
      `page ${page}: export schema version ${version}, but the pages written so far are version ${writtenVersion}`,
      ExitCode.SERVER,
      'EXPORT_SCHEMA_CHANGED',
      'Start the export over into a new file',
    );
  const count = header('x-row-count');
  if (count === undefined || !/^\d+$/.test(count))
    throw new CommandError(
      `page ${page}: the server sent no valid X-Row-Count header (${count ?? 'none'})`,
      ExitCode.SERVER,
      'EXPORT_ROW_COUNT_MISSING',
    );
  const next = header('x-next-cursor');
  return {
    version,
    rows: Number(count),
    next: next === '' ? undefined : next,
    settledThrough: headerValue(response.headers, 'x-settled-through'),
    complete: header('x-window-complete')?.toLowerCase() === 'true',
  };
}

/** A page whose rows do not add up to its X-Row-Count: exit 8, before it is checkpointed. */
export function rowCountMismatch(page: number, expected: number, received: number, resumable: string | undefined): CommandError {
  return new CommandError(
    `page ${page}: expected ${expected} rows (X-Row-Count), got ${received}`,
    ExitCode.SERVER,
    'EXPORT_ROW_COUNT_MISMATCH',
    resumable === undefined ? undefined : `${resumable} holds the pages before it; try again with --resume`,
  );
}
