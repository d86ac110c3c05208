import { headerValue, type ResponseHeaders } from '../../client/errors.js';
import { CommandError } from '../base-command.js';
import { ExitCode } from '../exit-codes.js';
import type { ExportFormat } from './records.js';

/** The media types of the two export formats (issue 15 item 5: an export must say what it is). */
const FORMAT_OF_MIME: Readonly<Record<string, ExportFormat>> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'application/x-ndjson': 'jsonl',
  'application/ndjson': 'jsonl',
  'application/jsonl': 'jsonl',
  'application/x-jsonlines': 'jsonl',
  'application/jsonlines': 'jsonl',
};

/** The export format an answer's Content-Type names, or undefined (none, HTML, JSON…). */
export function exportFormatOf(headers: ResponseHeaders): ExportFormat | undefined {
  const mime = headerValue(headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  return mime === undefined ? undefined : FORMAT_OF_MIME[mime];
}

/** An export answer that is neither CSV nor JSON lines, or not the format asked for and not convertible: exit 8. */
export function unexpectedExportType(headers: ResponseHeaders, asked: ExportFormat): CommandError {
  return new CommandError(
    `The export answer is ${headerValue(headers, 'content-type') ?? 'of no declared type'}, not ${asked === 'csv' ? 'CSV (text/csv)' : 'JSON lines (application/x-ndjson)'}`,
    ExitCode.SERVER,
    'EXPORT_CONTENT_TYPE',
    'Nothing was written. Check --base-url: the deployment may not offer this export.',
  );
}
