import { createWriteStream, existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Flags } from '../../cli/flags.js';
import { ApiCommand } from '../../cli/api-command.js';
import { auditFilterDescriptions } from '../../cli/audit.js';
import { startProgress } from '../../cli/progress.js';
import { UsageError } from '../../cli/prompts.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { audit } from '../../client/endpoints.js';

const def = audit.export;
const filters = queryFlags(def, { omit: ['format'], descriptions: auditFilterDescriptions });

export default class AuditExport extends ApiCommand<typeof AuditExport> {
  static override summary = 'Export matching audit entries as CSV or JSON lines, oldest first (needs MFA)';
  static override description = `Streams the server's export to stdout, or to --out FILE (written to FILE.partial and renamed when complete, so a file never holds half an export, and Ctrl-C, exit 130, leaves nothing behind). An existing FILE is refused (exit 2) unless --force is given; so is a directory that does not exist. Nothing is held in memory, whatever the size. Progress goes to stderr when it is a terminal and CI is not set. Needs a session with MFA: enable it with \`svc mfa setup\` and \`svc mfa enable\`.`;
  static override examples = [
    '<%= config.bin %> audit export > audit.csv',
    '<%= config.bin %> audit export --format jsonl --from 2026-01-01T00:00:00Z --out audit.jsonl',
    '<%= config.bin %> audit export --org-id 3b9e… --action auth.login',
  ];
  static override flags = {
    ...filters.flags,
    format: Flags.string({ summary: 'Body format.', options: ['csv', 'jsonl'], default: 'csv' }),
    out: Flags.string({ summary: 'Write to this file instead of stdout (an existing one only with --force).' }),
    force: Flags.boolean({ summary: 'Overwrite the file of --out when it exists.', dependsOn: ['out'] }),
  };

  async run() {
    const out = this.flags.out;
    if (out !== undefined) await this.checkOut(out);
    const query = { ...this.queryFrom(filters), format: this.flags.format === 'jsonl' ? ('jsonl' as const) : ('csv' as const) };
    const response = await this.call(def, { query });
    const progress = await startProgress('Exporting the audit log…', { color: this.terminal.color });
    let lines = 0;
    // Counts lines as they pass, for the progress line (a CSV cell with a line break counts twice: it is a hint).
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
        progress.update(`Exporting the audit log: ${lines.toLocaleString('en-US')} lines`);
        callback(null, chunk);
      },
    });
    try {
      if (out === undefined) {
        try {
          await pipeline(response.body, counter, process.stdout, { end: false });
        } catch (err) {
          // A reader that stops early (`| head`) is not a failure of the export.
          if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
        }
        return undefined;
      }
      // Written beside FILE and renamed when whole: an interrupted or failed export leaves nothing behind.
      const partial = `${out}.partial`;
      try {
        await pipeline(response.body, counter, createWriteStream(partial, { mode: 0o600 }));
        await rename(partial, out);
      } catch (err) {
        await rm(partial, { force: true });
        throw err;
      }
    } finally {
      progress.stop();
    }
    this.info(`Wrote the audit export to ${out}.`);
    return undefined;
  }

  /** FILE's directory must exist, and FILE must not unless --force (CLI.md exit 2: found before any request). */
  private async checkOut(out: string): Promise<void> {
    const { checkOutDirectory } = await import('../../cli/export/resume.js');
    await checkOutDirectory(out);
    if (!this.flags.force && existsSync(out)) throw new UsageError(`${out} exists: give --force to overwrite it`, '--force');
  }
}
