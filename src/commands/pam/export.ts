import { Flags } from '../../cli/flags.js';
import { ApiCommand } from '../../cli/api-command.js';
import { UsageError } from '../../cli/prompts.js';
import { queryFlags, kebab } from '../../cli/schema-flags.js';
import type { RequestOf } from '../../contract/endpoint.js';
import type { ContractOf } from '../../contract/projection.js';
import { pam } from '../../client/endpoints.js';

const def = pam.exportAudit;
const filters = queryFlags(def, {
  omit: ['from', 'to', 'format', 'limit', 'cursor', 'eventType'],
  descriptions: {
    orgId: 'The organization to export (required for partner and system callers).',
    siteId: 'Only events of requests of this site.',
    deviceId: 'Only events of requests of this device.',
    elevationRequestId: 'Only the events of this elevation request.',
  },
});

/** How often the progress line is redrawn at most. */
const PROGRESS_EVERY_MS = 250;

const number = (n: number) => Math.round(n).toLocaleString('en-US');

export default class PamExport extends ApiCommand<typeof PamExport> {
  static override summary =
    'Export the elevation audit trail of an organization as CSV or JSON lines, page by page (needs a session with MFA)';
  static override description = `Streams every event recorded in [--from, --to) — each joined to its request's current state — following the server's cursor page after page, to stdout or to --out FILE. Nothing is held in memory, whatever the size. The CSV header is written once; each page's rows are counted against X-Row-Count and its X-Export-Schema-Version checked (this svc reads version 1): a page that does not add up, or a version it does not know, stops the export with exit 8.

With --out FILE, each page is appended to FILE and fsynced, then a checkpoint FILE.cursor records the cursor, the rows and the length of FILE so far. If the export is interrupted (Ctrl-C, a crash, a lost connection), run the same command with --resume: FILE is cut back to its last checkpointed page and the export continues from there, with no row lost or doubled. The parameters must be the same (else exit 2); --limit may differ. The checkpoint is removed when the export ends. Without --resume an existing checkpoint is refused (exit 2), so an interrupted export is never overwritten by accident.

The newest few minutes are withheld until they settle (X-Settled-Through). When --to is later than that, the window is not complete: the export writes what has settled and exits 9 (keeping the checkpoint, so --resume continues later); --allow-incomplete accepts the partial window (exit 0); --follow waits --poll-seconds and polls again from the last cursor until the window is complete, for feeding a SIEM.

Progress (rows, pages, rows/s, settled-through time) goes to stderr when it is a terminal. Needs audit:export and devices:read, and a user session with MFA (API keys are refused).`;
  static override examples = [
    '<%= config.bin %> pam export --org-id 3b9e… --from 2026-01-01T00:00:00Z --to 2026-02-01T00:00:00Z --out january.csv',
    '<%= config.bin %> pam export --org-id 3b9e… --from 2026-01-01T00:00:00Z --to 2026-02-01T00:00:00Z --out january.csv --resume',
    '<%= config.bin %> pam export --org-id 3b9e… --from 2026-01-01T00:00:00+01:00 --to 2027-01-01T00:00:00+01:00 --format jsonl --follow --poll-seconds 60 | siem-forwarder',
    '<%= config.bin %> pam export --org-id 3b9e… --from 2026-03-01T00:00:00Z --to 2026-03-02T00:00:00Z --event-type approved --allow-incomplete > approvals.csv',
  ];
  static override flags = {
    from: Flags.string({
      summary: 'Window start, inclusive: ISO 8601 with offset, e.g. 2026-01-01T00:00:00Z.',
      required: true,
    }),
    to: Flags.string({
      summary: 'Window end, exclusive: ISO 8601 with offset (at most 366 days after --from).',
      required: true,
    }),
    ...filters.flags,
    'event-type': Flags.string({
      summary: 'Only events of this type.',
      options: def.query.find((f) => f.field === 'eventType')?.options ?? [],
    }),
    format: Flags.string({ summary: 'Body format.', options: ['csv', 'jsonl'], default: 'csv' }),
    limit: Flags.integer({ summary: 'Rows per page (1-1000).', min: 1, max: 1000, default: 1000 }),
    out: Flags.string({
      summary: 'Write to this file (with a checkpoint FILE.cursor after every page) instead of stdout.',
    }),
    resume: Flags.boolean({ summary: 'Continue the interrupted export recorded in FILE.cursor.', dependsOn: ['out'] }),
    'allow-incomplete': Flags.boolean({
      summary: 'Exit 0 even when the window is not complete yet (rows not yet settled are left out).',
      exclusive: ['follow'],
    }),
    follow: Flags.boolean({ summary: 'Keep polling until the window is complete.', exclusive: ['allow-incomplete'] }),
    'poll-seconds': Flags.integer({ summary: 'Seconds between polls with --follow.', min: 1, max: 3600, default: 30 }),
  };
  static override columns = ['out', 'rows', 'pages', 'complete', 'settledThrough'];
  static override quietField = 'out';

  async run() {
    const flags = this.flags;
    const format = flags.format === 'jsonl' ? 'jsonl' : 'csv';
    const given = this.queryFrom(filters);
    const text = (value: unknown) => (typeof value === 'string' ? value : null);
    const params = {
      from: flags.from,
      to: flags.to,
      orgId: text(given.orgId),
      format,
      filters: {
        siteId: text(given.siteId),
        deviceId: text(given.deviceId),
        elevationRequestId: text(given.elevationRequestId),
        eventType: flags['event-type'] ?? null,
      },
    } as const;

    const { exportQuery, runElevationExport } = await import('../../cli/pam-export.js');
    // The contract checks the window (offsets, from before to, at most 366 days) before anything is sent.
    const { ElevationAuditExportQuerySchema } = await import('../../contract/pam.js');
    const checked = ElevationAuditExportQuerySchema.safeParse(exportQuery(params, flags.limit));
    if (!checked.success) {
      const issues = checked.error.issues.map(
        (issue) => `${typeof issue.path[0] === 'string' ? `--${kebab(issue.path[0])}: ` : ''}${issue.message}`,
      );
      throw new UsageError(`Invalid export parameters: ${issues.join('; ')}`);
    }

    const session = await this.session();
    const { callRaw } = await import('../../client/contract-client.js');
    const http = session.http();
    const showProgress = this.terminal.stderrIsTTY && !process.env.CI;
    let drawn = 0;
    let line = false;
    let last = { rows: 0, pages: 0 };
    const out = flags.out;
    if (out !== undefined) {
      process.once('SIGINT', () => {
        if (line) process.stderr.write('\n');
        process.stderr.write(
          `Interrupted after ${number(last.rows)} rows in ${last.pages} pages; continue with the same command and --resume (the checkpoint is ${out}.cursor).\n`,
        );
        process.exit(130);
      });
    }

    const summary = await runElevationExport({
      params,
      limit: flags.limit,
      // Checked against the contract above; only the cursor varies from page to page.
      fetchPage: (query) => callRaw(http, def, { query: query as RequestOf<ContractOf<typeof def>>['query'] }),
      out,
      resume: flags.resume,
      allowIncomplete: flags['allow-incomplete'],
      follow: flags.follow,
      pollSeconds: flags['poll-seconds'],
      onProgress: (progress) => {
        last = progress;
        if (!showProgress) return;
        const now = Date.now();
        if (!progress.complete && !progress.waiting && now - drawn < PROGRESS_EVERY_MS) return;
        drawn = now;
        const settled = progress.settledThrough ? ` · settled through ${progress.settledThrough}` : '';
        const waiting = progress.waiting ? ` · waiting ${flags['poll-seconds']} s for the window to settle` : '';
        process.stderr.write(
          `\r\u001b[K${number(progress.rows)} rows · ${progress.pages} pages · ${number(progress.rowsPerSecond)} rows/s${settled}${waiting}`,
        );
        line = true;
      },
    }).finally(() => {
      if (line) process.stderr.write('\n');
    });
    return out === undefined ? undefined : summary;
  }
}
