import { idArg } from './args.js';
import { ApiCommand, mutationFlags } from './api-command.js';
import { Flags } from './flags.js';
import type { CallResult } from '../client/contract-client.js';
import type { EndpointDef } from '../contract/endpoint.js';
import type { ClientEndpoint } from '../contract/projection.js';
import { requestOf } from './resource-commands.js';

/**
 * `svc mobile approvals approve|deny <id>`: the decision of the approvals inbox. Critical-tier approvals need the
 * password, which this command never takes from argv: use `svc pam requests approve --reauth-password-stdin`.
 */
export function decisionCommand<E extends EndpointDef, R>(
  decision: 'approve' | 'deny',
  def: ClientEndpoint<E>,
  summary: string,
  pick: (answer: CallResult<E>) => R,
) {
  class DecisionCommand extends ApiCommand<typeof DecisionCommand> {
    static override summary = summary;
    static override examples = [`<%= config.bin %> mobile approvals ${decision} 9c3e…`, `<%= config.bin %> mobile approvals ${decision} 9c3e… --reason "change window" --yes`];
    static override args = idArg('elevation request');
    static override flags = {
      reason: Flags.string({ summary: 'Why (kept in the elevation audit trail)' }),
      'duration-minutes': Flags.integer({ summary: 'approve: minutes the elevation lasts, 1-1440 (default 15)' }),
      ...mutationFlags,
    };
    static override columns = ['id', 'status', 'enforcementStatus', 'refusalReason', 'decidedAt'];

    async run() {
      const { reason } = this.flags;
      const minutes = this.flags['duration-minutes'];
      await this.confirm(`${decision === 'approve' ? 'Approve' : 'Deny'} the elevation request ${this.args.id}?`);
      const request = {
        params: { id: this.args.id },
        body: { ...(reason !== undefined ? { reason } : {}), ...(minutes !== undefined ? { durationMinutes: minutes } : {}) },
      };
      return pick(await this.call(def, requestOf<E>(request)));
    }
  }
  return DecisionCommand;
}
