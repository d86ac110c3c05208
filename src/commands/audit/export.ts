import { createWriteStream, existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Flags } from '../../cli/flags.js';
import { ApiCommand } from '../../cli/api-command.js';
import { auditFilterDescriptions } from '../../cli/audit.js';
import { startProgress } from '../../cli/progress.js';
import { UsageError } from '../../cli/prompts.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { CommandError, honouring } from '../../cli/base-command.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { HOSTED_AUDIT_EXPORT_CAP, auditRowMatcher, rowFilter, rowParser, rowWriter, type RowCounts } from '../../cli/export/audit-rows.js';
import { exportFormatOf, unexpectedExportType } from '../../cli/export/content-type.js';
import type { ExportFormat } from '../../cli/export/records.js';
import { audit } from '../../client/endpoints.js';
import { headerValue, type ResponseHeaders } from '../../client/errors.js';

const def = audit.export;
const filters = queryFlags(def, { omit: ['format'], descriptions: auditFilterDescriptions });

export default class AuditExport extends ApiCommand<typeof AuditExport> {
  static override summary = 'Export matching audit entries as CSV or JSON lines, oldest first (needs MFA)';
  static override description = `Streams the server's export, row by row, checking each row against the filters given (a hosted deployment ignores them and always answers CSV, newest first, at most 10,000 rows: the CLI converts to --format, leaves out the rows outside the filters, and says on stderr when the answer was capped: exit 9, the rows written kept, unless --allow-incomplete). An answer that is neither CSV nor JSON lines fails with exit 8 and writes nothing. The rows go to stdout, or to --out FILE (written to FILE.partial and renamed when complete, so a file never holds half an export, and Ctrl-C, exit 130, leaves nothing behind). An existing FILE is refused (exit 2) unless --force is given; so is a directory that does not exist. Nothing is held in memory, whatever the size. Progress goes to stderr when it is a terminal and CI is not set. Needs a session with MFA: enable it with \`svc mfa setup\` and \`svc mfa enable\`.`;
  static override examples = [
    '<%= config.bin %> audit export > audit.csv',
    '<%= config.bin %> audit export --format jsonl --from 2026-01-01T00:00:00Z --out audit.jsonl',
    '<%= config.bin %> audit export --org-id 3b9e… --action auth.login',
  ];
  // The rows go out as --format says: no output flag applies.
  static override baseFlags = honouring(ApiCommand.baseFlags, []);
  static override flags = {
    ...filters.flags,
    format: Flags.string({ summary: 'Body format.', options: ['csv', 'jsonl'], default: 'csv' }),
    out: Flags.string({ summary: 'Write to this file instead of stdout (an existing one only with --force).' }),
    force: Flags.boolean({ summary: 'Overwrite the file of --out when it exists.', dependsOn: ['out'] }),
    'allow-incomplete': Flags.boolean({ summary: 'Exit 0 even when the server capped its answer (older entries left out).' }),
  };

  async run() {
    const out = this.flags.out;
    if (out !== undefined) await this.checkOut(out);
    const asked: ExportFormat = this.flags.format === 'jsonl' ? 'jsonl' : 'csv';
    const filter = this.queryFrom(filters);
    const response = await this.call(def, { query: { ...filter, format: asked } });
    // The answer must say what it is (issue 15 item 5): CSV or JSON lines, converted to the format asked for;
    // anything else fails before a byte is written.
    const sent = exportFormatOf(response.headers);
    if (sent === undefined) {
      await response.body.dump().catch(() => undefined);
      throw unexpectedExportType(response.headers, asked);
    }
    if (sent !== asked) this.info(`The server answered ${sent === 'csv' ? 'CSV' : 'JSON lines'} although ${asked} was asked for: converting it.`);
    const progress = await startProgress('Exporting the audit log…', { color: this.terminal.color });
    const counts: RowCounts = { received: 0, kept: 0 };
    // Every row is checked against the filters given, whether or not the server applied them.
    const stages = [
      response.body,
      await rowParser(sent),
      rowFilter(auditRowMatcher(filter), counts, () => progress.update(`Exporting the audit log: ${counts.kept.toLocaleString('en-US')} rows`)),
      rowWriter(asked),
    ] as const;
    try {
      if (out === undefined) {
        try {
          await pipeline(...stages, process.stdout, { end: false });
        } catch (err) {
          // A reader that stops early (`| head`) is not a failure of the export.
          if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw unreadable(err);
        }
      } else {
        // Written beside FILE and renamed when whole: an interrupted or failed export leaves nothing behind.
        const partial = `${out}.partial`;
        try {
          await pipeline(...stages, createWriteStream(partial, { mode: 0o600 }));
          await rename(partial, out);
        } catch (err) {
          await rm(partial, { force: true });
          throw unreadable(err);
        }
      }
    } finally {
      progress.stop();
    }
    const capped = this.report(response.headers, counts);
    if (out !== undefined) this.info(`Wrote the audit export to ${out}.`);
    // CLI.md exit 9: an incomplete result. The rows written are whole; a script must not take them for all.
    if (capped && !this.flags['allow-incomplete'])
      throw new CommandError('The export is incomplete: the server capped its answer (give --allow-incomplete to accept it)', ExitCode.INCOMPLETE, 'EXPORT_CAPPED');
    return undefined;
  }

  /** On stderr: rows the filters dropped (the server did not apply them), and an answer the server capped;
   * true when it was capped. */
  private report(headers: ResponseHeaders, counts: RowCounts): boolean {
    const dropped = counts.received - counts.kept;
    if (dropped > 0) this.info(`${dropped.toLocaleString('en-US')} of the ${counts.received.toLocaleString('en-US')} rows the server sent were outside the filters given and were left out.`);
    // X-Truncated says it (the bundled server sends false); without it, an answer of the hosted cap's length was capped.
    const said = headerValue(headers, 'x-truncated')?.trim().toLowerCase();
    if (said === undefined ? counts.received < HOSTED_AUDIT_EXPORT_CAP : said !== 'true') return false;
    this.warn(
      `The server's answer was capped at ${counts.received.toLocaleString('en-US')} rows: older entries may be missing. Narrow the window with --from and --to and export it in parts.`,
    );
    return true;
  }

  /** FILE's directory must exist, and FILE must not unless --force (CLI.md exit 2: found before any request). */
  private async checkOut(out: string): Promise<void> {
    const { checkOutDirectory } = await import('../../cli/export/resume.js');
    await checkOutDirectory(out);
    if (!this.flags.force && existsSync(out)) throw new UsageError(`${out} exists: give --force to overwrite it`, '--force');
  }
}

/** A body that does not parse as the format it declared is the server's failure (exit 8), not svc's. */
function unreadable(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (err instanceof SyntaxError || (typeof code === 'string' && code.startsWith('CSV_')))
    return new CommandError(`The export answer does not parse as the format it declares: ${(err as Error).message}`, ExitCode.SERVER, 'EXPORT_UNPARSEABLE');
  return err;
}
