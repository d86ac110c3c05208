import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { DECISION_COLUMNS } from '../../../cli/pam-command.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.revoke;
const body = bodyFlags(def, {
  descriptions: { reason: 'Why (required, up to 2000 characters; kept in the audit trail).' },
});

export default class PamRequestsRevoke extends ApiCommand<typeof PamRequestsRevoke> {
  static override summary =
    'Revoke an elevation in force: the device is told to remove the rights (needs a session with MFA)';
  static override description = `Works on approved, auto_approved and actuating requests; the answer shows enforcementStatus cleanup_pending while the device cleans up. Anything else is refused (exit 6). Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = [
    '<%= config.bin %> pam requests revoke 2a7c… --reason "Work finished"',
    '<%= config.bin %> pam requests revoke 2a7c… --reason "Compromised account" --yes',
  ];
  static override args = idArg('Elevation request');
  static override flags = { ...body.flags, ...mutationFlags };
  static override columns = DECISION_COLUMNS;

  async run() {
    const { id } = this.args;
    const fields = await this.bodyFrom(body);
    if (typeof fields.reason !== 'string') throw new UsageError('Give --reason: a revocation needs one', '--reason');
    await this.confirm(`Revoke elevation ${id}? The device removes the rights at once.`);
    return this.call(def, { params: { id }, body: { reason: fields.reason } });
  }
}
