import { setTimeout as sleep } from 'node:timers/promises';
import { Flags } from '@oclif/core';
import { idArg } from '../../cli/args.js';
import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { CommandError } from '../../cli/base-command.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { startProgress } from '../../cli/progress.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { scripts } from '../../client/endpoints.js';

const body = bodyFlags(scripts.execute, { omit: ['deviceIds'] });
const FINISHED = new Set(['completed', 'failed', 'timeout', 'cancelled']);

export default class ScriptsRun extends ApiCommand<typeof ScriptsRun> {
  static override summary = 'Run a script on devices (needs a session with MFA); --wait waits for every result';
  static override description = `Without --wait, prints the batch (one execution and one agent command per device). With --wait, polls each run until it ends and prints the runs (status, exit code, output); progress goes to stderr on a terminal only. Exits 9 when any device's run did not complete with exit code 0 (failed, timed out, cancelled, or could not be dispatched), after printing the runs.`;
  static override examples = [
    '<%= config.bin %> scripts run 7a1c… --device 0d3f… --device 9b2e… --wait',
    `<%= config.bin %> scripts run 7a1c… --device 0d3f… --parameters '{"who":"ops"}' -o json`,
  ];
  static override args = idArg('Script');
  static override flags = {
    device: Flags.string({ summary: 'Device id to run on (repeat the flag, or a comma list)', required: true, multiple: true, delimiter: ',' }),
    ...body.flags,
    wait: Flags.boolean({ summary: 'Wait until every run has ended, then print them' }),
    'wait-seconds': Flags.integer({ summary: 'Longest wait with --wait, in seconds (default 3900)', min: 1, max: 86_400, default: 3900 }),
    'poll-seconds': Flags.integer({ summary: 'Seconds between status checks with --wait (default 2)', min: 1, max: 60, default: 2 }),
    ...createFlags,
  };
  static override columns = ['id', 'deviceId', 'status', 'exitCode', 'severity', 'stdout'];

  async run() {
    const batch = await this.call(scripts.execute, { params: { id: this.args.id }, body: { ...(await this.bodyFrom(body)), deviceIds: this.flags.device } });
    if (!this.flags.wait) return batch;
    const pending = new Set(batch.executions.map((e) => e.executionId));
    const runs = new Map<string, Awaited<ReturnType<typeof this.fetchRun>>>();
    const progress = await startProgress(`Waiting for ${pending.size} run(s)…`, { color: this.terminal.color });
    const deadline = Date.now() + this.flags['wait-seconds'] * 1000;
    try {
      while (pending.size > 0) {
        for (const id of [...pending]) {
          const run = await this.fetchRun(id);
          runs.set(id, run);
          if (FINISHED.has(run.status)) pending.delete(id);
        }
        progress.update(`${runs.size - pending.size} of ${runs.size} run(s) finished`);
        if (pending.size === 0) break;
        if (Date.now() >= deadline) break;
        await sleep(this.flags['poll-seconds'] * 1000, undefined, { signal: this.interrupt.signal });
      }
    } finally {
      progress.stop();
    }
    const all = [...runs.values()];
    const failed = all.filter((r) => r.status !== 'completed').length + (batch.failures?.length ?? 0);
    if (failed === 0) return all;
    this.print(all);
    const why = pending.size > 0 ? `; ${pending.size} still running after ${this.flags['wait-seconds']} s` : '';
    throw new CommandError(`${failed} of ${all.length + (batch.failures?.length ?? 0)} device run(s) did not succeed${why}`, ExitCode.INCOMPLETE, 'SCRIPT_RUN_FAILED');
  }

  private fetchRun(id: string) {
    return this.call(scripts.execution, { params: { id } });
  }
}
