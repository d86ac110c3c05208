import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { pam } from '../../../client/endpoints.js';

export default class PamRulesDelete extends ApiCommand<typeof PamRulesDelete> {
  static override summary = 'Delete an elevation rule (needs a session with MFA)';
  static override description = `Requests it would have matched fall to the next rule, or to the organization default (\`svc pam config\`). Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = [
    '<%= config.bin %> pam rules delete 7d41…',
    '<%= config.bin %> pam rules delete 7d41… --yes',
  ];
  static override args = idArg('Elevation rule');
  static override flags = { ...mutationFlags };

  async run() {
    const { id } = this.args;
    await this.confirm(
      `Delete elevation rule ${id}? Requests it matched fall to the next rule or the organization default.`,
    );
    const result = await this.call(pam.deleteRule, { params: { id } });
    return { id, ...result };
  }
}
