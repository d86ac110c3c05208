import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { tenancy } from '../../client/endpoints.js';

export default class OrgsGet extends ApiCommand<typeof OrgsGet> {
  static override summary = 'Show an organization';
  static override examples = ['<%= config.bin %> orgs get 3b9e…', '<%= config.bin %> orgs get 3b9e… --output json'];
  static override args = idArg('Organization');

  async run() {
    return this.call(tenancy.getOrganization, { params: { id: this.args.id } });
  }
}
