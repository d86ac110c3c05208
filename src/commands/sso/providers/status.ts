import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { Args } from '../../../cli/flags.js';
import { sso } from '../../../client/endpoints.js';

export default class SsoProvidersStatus extends ApiCommand<typeof SsoProvidersStatus> {
  static override summary = "Set an SSO provider inactive, testing or active (activating it deactivates the organization's other active one)";
  static override examples = ['<%= config.bin %> sso providers status 61c7… active', '<%= config.bin %> sso providers status 61c7… inactive'];
  static override args = {
    id: Args.string({ required: true, description: 'SSO provider id' }),
    status: Args.string({ required: true, description: 'New status', options: ['inactive', 'testing', 'active'] }),
  };
  static override flags = { ...mutationFlags };
  static override columns = ['id', 'name', 'status'];

  async run() {
    const status = this.args.status as 'inactive' | 'testing' | 'active';
    return (await this.call(sso.setProviderStatus, { params: { id: this.args.id }, body: { status } })).data;
  }
}
