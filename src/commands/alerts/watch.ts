import { setTimeout as sleep } from 'node:timers/promises';
import { ApiCommand } from '../../cli/api-command.js';
import { honouring } from '../../cli/base-command.js';
import { Flags } from '../../cli/flags.js';
import { UsageError } from '../../cli/prompts.js';
import { alerts } from '../../client/endpoints.js';

/** Pages read in one poll at most (100 alerts each): every change is read, whatever the burst, up to this bound
 * (a runaway server), past which the rest are skipped with a warning. */
const MAX_PAGES = 1000;

export default class AlertsWatch extends ApiCommand<typeof AlertsWatch> {
  static override summary = 'Follow new and changed alerts: one line per change, until Ctrl-C (exit 130)';
  static override description =
    'Polls GET /alerts for alerts changed since the last poll. A terminal gets one text line per change (time, status, severity, id, title); -o jsonl (or json) prints each changed alert as one JSON object per line.';
  static override examples = ['<%= config.bin %> alerts watch', '<%= config.bin %> alerts watch --severity critical -o jsonl | jq .title'];
  // One line per change: -o json or jsonl makes it an object; nothing else of the output flags applies.
  static override baseFlags = honouring(ApiCommand.baseFlags, ['output']);
  static override flags = {
    interval: Flags.integer({ summary: 'Seconds between polls (1-300)', default: 5, min: 1, max: 300 }),
    since: Flags.string({ summary: 'Also show changes since this time (ISO 8601; default: now)' }),
    'org-id': Flags.string({ summary: 'Only alerts of this organization' }),
    severity: Flags.string({ summary: 'Only alerts of this severity', options: ['critical', 'high', 'medium', 'low', 'info'] }),
  };

  async run() {
    const { interval, since, severity } = this.flags;
    const orgId = this.flags['org-id'];
    const seen = new Map<string, string>();
    let cursor = since ?? new Date().toISOString();
    const output = (this.flags as { output?: string }).output;
    if (output !== undefined && output !== 'json' && output !== 'jsonl')
      throw new UsageError(`-o ${output}: alerts watch prints a text line per change, or with -o json or jsonl a JSON object per line`, '--output');
    const json = this.format === 'jsonl' || this.format === 'json';
    for (;;) {
      const pollStarted = new Date(Date.now() - 2000).toISOString();
      const changed = [];
      for (let page = 1; page <= MAX_PAGES; page++) {
        const answer = await this.call(alerts.list, {
          query: { updatedSince: cursor, page, limit: 100, ...(orgId ? { orgId } : {}), ...(severity ? { severity: severity as 'critical' } : {}) },
        });
        changed.push(...answer.data);
        if (page * 100 >= answer.pagination.total) break;
        // The pages go by trigger time, not by change: a cursor cannot resume in them, so a poll reads them all.
        if (page === MAX_PAGES) this.warn(`More than ${MAX_PAGES * 100} alerts changed since ${cursor}: the rest are skipped.`);
      }
      for (const alert of changed.sort((a, b) => a.updatedAt.localeCompare(b.updatedAt))) {
        if (seen.get(alert.id) === alert.updatedAt) continue;
        seen.set(alert.id, alert.updatedAt);
        process.stdout.write(json ? `${JSON.stringify(alert)}\n` : `${alert.updatedAt}  ${alert.status.padEnd(12)} ${alert.severity.padEnd(8)} ${alert.id}  ${alert.title}\n`);
      }
      // The 2 s overlap covers clock skew; `seen` keeps the overlap from printing twice.
      cursor = pollStarted;
      if (seen.size > 10_000) seen.clear();
      await sleep(interval * 1000, undefined, { signal: this.interrupt.signal });
    }
  }
}
