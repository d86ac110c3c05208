import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { DECISION_COLUMNS } from '../../../cli/pam-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.respond;
const body = bodyFlags(def, {
  omit: ['decision', 'proof', 'reauthPassword', 'reauthMfaCode', 'durationMinutes'],
  descriptions: { reason: 'Why (up to 2000 characters; kept with the request and in the audit trail).' },
});

export default class PamRequestsDeny extends ApiCommand<typeof PamRequestsDeny> {
  static override summary = 'Deny a pending elevation request (needs a session with MFA and pam:approve)';
  static override description = `A deny is never blocked by step-up policy and needs no re-authentication. A request that is no longer pending is refused (exit 6).`;
  static override examples = ['<%= config.bin %> pam requests deny 2a7c… --reason "Not on the approved software list"'];
  static override args = idArg('Elevation request');
  static override flags = { ...body.flags, ...mutationFlags };
  static override columns = DECISION_COLUMNS;

  async run() {
    return this.call(def, {
      params: { id: this.args.id },
      body: { decision: 'deny' as const, ...(await this.bodyFrom(body)) },
    });
  }
}
