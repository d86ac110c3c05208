import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Flags } from '../../cli/flags.js';
import { ApiCommand } from '../../cli/api-command.js';
import { auditFilterDescriptions } from '../../cli/audit.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { audit } from '../../client/endpoints.js';

const def = audit.export;
const filters = queryFlags(def, { omit: ['format'], descriptions: auditFilterDescriptions });

export default class AuditExport extends ApiCommand<typeof AuditExport> {
  static override summary = 'Export matching audit entries as CSV or JSON lines, oldest first (needs MFA)';
  static override description = `Streams the server's export to stdout, or to --out FILE (written to FILE.partial and renamed when complete, so a file never holds half an export). Nothing is held in memory, whatever the size. Needs a session with MFA: enable it with \`svc mfa setup\` and \`svc mfa enable\`.`;
  static override examples = [
    '<%= config.bin %> audit export > audit.csv',
    '<%= config.bin %> audit export --format jsonl --from 2026-01-01T00:00:00Z --out audit.jsonl',
    '<%= config.bin %> audit export --org-id 3b9e… --action auth.login',
  ];
  static override flags = {
    ...filters.flags,
    format: Flags.string({ summary: 'Body format.', options: ['csv', 'jsonl'], default: 'csv' }),
    out: Flags.string({ summary: 'Write to this file instead of stdout.' }),
  };

  async run() {
    const query = { ...this.queryFrom(filters), format: this.flags.format as 'csv' | 'jsonl' };
    const response = await this.call(audit.export, { query });
    const out = this.flags.out;
    if (out === undefined) {
      try {
        await pipeline(response.body, process.stdout, { end: false });
      } catch (err) {
        // A reader that stops early (`| head`) is not a failure of the export.
        if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
      }
      return undefined;
    }
    const partial = `${out}.partial`;
    try {
      await pipeline(response.body, createWriteStream(partial, { mode: 0o600 }));
      await rename(partial, out);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    this.info(`Wrote the audit export to ${out}.`);
    return undefined;
  }
}
