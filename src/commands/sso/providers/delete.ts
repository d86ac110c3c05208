import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { sso } from '../../../client/endpoints.js';

export default class SsoProvidersDelete extends ApiCommand<typeof SsoProvidersDelete> {
  static override summary = 'Delete an SSO provider with its identity links (its users keep their accounts)';
  static override examples = ['<%= config.bin %> sso providers delete 61c7…', '<%= config.bin %> sso providers delete 61c7… --yes'];
  static override args = idArg('SSO provider');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete SSO provider ${this.args.id}? Its users can no longer sign in through it.`);
    return this.call(sso.deleteProvider, { params: { id: this.args.id } });
  }
}
