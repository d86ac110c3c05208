import { idArg } from '../../../cli/args.js';
import { ApiCommand } from '../../../cli/api-command.js';
import { sso } from '../../../client/endpoints.js';

export default class SsoProvidersGet extends ApiCommand<typeof SsoProvidersGet> {
  static override summary = 'Show an SSO provider (never its client secret, only whether one is stored)';
  static override examples = ['<%= config.bin %> sso providers get 61c7…', '<%= config.bin %> sso providers get 61c7… --output yaml'];
  static override args = idArg('SSO provider');

  async run() {
    return (await this.call(sso.getProvider, { params: { id: this.args.id } })).data;
  }
}
