import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { sso } from '../../../client/endpoints.js';

export default class SsoProvidersTest extends ApiCommand<typeof SsoProvidersTest> {
  static override summary = "Check that an OIDC provider's discovery document is reachable and valid";
  static override examples = ['<%= config.bin %> sso providers test 61c7…'];
  static override args = idArg('SSO provider');
  static override flags = { ...mutationFlags };
  static override columns = ['success', 'message'];

  async run() {
    return this.call(sso.testProvider, { params: { id: this.args.id } });
  }
}
