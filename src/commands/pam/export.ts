import { Flags } from '../../cli/flags.js';
import { ApiCommand } from '../../cli/api-command.js';
import { honouring } from '../../cli/base-command.js';
import { UsageError } from '../../cli/prompts.js';
import { queryFlags, kebab } from '../../cli/schema-flags.js';
import { startProgress } from '../../cli/progress.js';
import { pam } from '../../client/endpoints.js';

const def = pam.exportAudit;
const filters = queryFlags(def, {
  omit: ['from', 'to', 'format', 'limit', 'cursor'],
  descriptions: {
    eventType: 'Only events of this type.',
    orgId: 'The organization to export (required for partner and system callers).',
    siteId: 'Only events of requests of this site.',
    deviceId: 'Only events of requests of this device.',
    elevationRequestId: 'Only the events of this elevation request.',
  },
});

export default class PamExport extends ApiCommand<typeof PamExport> {
  static override summary =
    'Export the elevation audit trail of an organization as CSV or JSON lines, page by page (needs a session with MFA)';
  static override description = `Streams every event recorded in [--from, --to) — each joined to its request's current state — following the server's cursor page after page, to stdout or to --out FILE. Nothing is held in memory, whatever the size. The CSV header is written once; each page's rows are counted against X-Row-Count and its X-Export-Schema-Version checked (this svc reads version 1): a page that does not add up, or a version it does not know, stops the export with exit 8.

With --out FILE, each page is appended to FILE and fsynced, then a checkpoint FILE.cursor records the cursor, the rows and the length of FILE so far. If the export is interrupted (Ctrl-C, a crash, a lost connection), run the same command with --resume: FILE is cut back to its last checkpointed page and the export continues from there, with no row lost or doubled. The parameters must be the same (else exit 2); --limit may differ. The checkpoint is removed when the export ends. Without --resume an existing checkpoint is refused (exit 2), so an interrupted export is never overwritten by accident; nor is a finished one: an existing FILE is refused (exit 2) unless --force is given, which also starts an interrupted export over. A directory of FILE that does not exist is exit 2 too.

Ctrl-C stops the export with exit 130: the page being written is dropped, so FILE ends at its checkpoint, and the message gives the same row count as the checkpoint; --resume continues from there.

The newest few minutes are withheld until they settle (X-Settled-Through). When --to is later than that, the window is not complete: the export writes what has settled and exits 9 (keeping the checkpoint, so --resume continues later); --allow-incomplete accepts the partial window (exit 0); --follow waits --poll-seconds and polls again from the last cursor until the window is complete, for feeding a SIEM.

Progress (rows, pages, rows/s, settled-through time) goes to stderr when it is a terminal and CI is not set. Needs audit:export and devices:read, and a user session with MFA (API keys are refused).`;
  static override examples = [
    '<%= config.bin %> pam export --org-id 3b9e… --from 2026-01-01T00:00:00Z --to 2026-02-01T00:00:00Z --out january.csv',
    '<%= config.bin %> pam export --org-id 3b9e… --from 2026-01-01T00:00:00Z --to 2026-02-01T00:00:00Z --out january.csv --resume',
    '<%= config.bin %> pam export --org-id 3b9e… --from 2026-01-01T00:00:00+01:00 --to 2027-01-01T00:00:00+01:00 --format jsonl --follow --poll-seconds 60 | siem-forwarder',
    '<%= config.bin %> pam export --org-id 3b9e… --from 2026-03-01T00:00:00Z --to 2026-03-02T00:00:00Z --event-type approved --allow-incomplete > approvals.csv',
  ];
  // The rows go out as --format says; -o and -q shape only the summary printed with --out.
  static override baseFlags = honouring(ApiCommand.baseFlags, ['output', 'quiet']);
  static override flags = {
    from: Flags.string({
      summary: 'Window start, inclusive: ISO 8601 with offset, e.g. 2026-01-01T00:00:00Z (a date alone is the start of that day in UTC).',
      required: true,
    }),
    to: Flags.string({
      summary: 'Window end, exclusive: ISO 8601 with offset (at most 366 days after --from).',
      required: true,
    }),
    ...filters.flags,
    format: Flags.string({ summary: 'Body format.', options: ['csv', 'jsonl'], default: 'csv' }),
    limit: Flags.integer({ summary: 'Rows per page (1-1000).', min: 1, max: 1000, default: 1000 }),
    out: Flags.string({
      summary: 'Write to this file (with a checkpoint FILE.cursor after every page) instead of stdout.',
    }),
    resume: Flags.boolean({
      summary: 'Continue the interrupted export recorded in FILE.cursor.',
      dependsOn: ['out'],
      exclusive: ['force'],
    }),
    force: Flags.boolean({
      summary: 'Overwrite FILE when it exists (a finished export), or start an interrupted one over.',
      dependsOn: ['out'],
      exclusive: ['resume'],
    }),
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
    const given = this.queryFrom(filters);
    const params = {
      from: this.dateTime('from', flags.from),
      to: this.dateTime('to', flags.to),
      orgId: given.orgId ?? null,
      format: flags.format === 'jsonl' ? 'jsonl' : 'csv',
      filters: {
        siteId: given.siteId ?? null,
        deviceId: given.deviceId ?? null,
        elevationRequestId: given.elevationRequestId ?? null,
        eventType: given.eventType ?? null,
      },
    } as const;

    // Without --out the rows are the output, and their shape is --format's: refuse what could not be honoured.
    if (!flags.out && (flags.output !== undefined || flags.quiet)) {
      throw new UsageError('-o and -q shape the summary printed with --out; without --out the rows go out as --format says (csv or jsonl)');
    }
    const { exportQuery, runElevationExport, describeProgress } = await import('../../cli/export/run.js');
    // The contract checks the window (offsets, from before to, at most 366 days) before anything is sent.
    const { ElevationAuditExportQuerySchema } = await import('../../contract/pam.js');
    const checked = ElevationAuditExportQuerySchema.safeParse(exportQuery(params, flags.limit));
    if (!checked.success) {
      const issues = checked.error.issues.map(
        (issue) => `${typeof issue.path[0] === 'string' ? `--${kebab(issue.path[0])}: ` : ''}${issue.message}`,
      );
      throw new UsageError(`Invalid export parameters: ${issues.join('; ')}`);
    }

    const progress = await startProgress('Exporting…', { color: this.terminal.color });
    try {
      const summary = await runElevationExport({
        params,
        limit: flags.limit,
        fetchPage: (query) => this.call(def, { query }),
        out: flags.out,
        resume: flags.resume,
        force: flags.force,
        allowIncomplete: flags['allow-incomplete'],
        follow: flags.follow,
        pollSeconds: flags['poll-seconds'],
        signal: this.interrupt.signal,
        onProgress: (state) => progress.update(describeProgress(state, flags['poll-seconds'])),
      });
      progress.stop({ keep: true });
      return flags.out === undefined ? undefined : summary;
    } finally {
      progress.stop();
    }
  }
}
