import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const body = bodyFlags(tenancy.updateOrganization, {
  descriptions: { partnerId: 'Immutable: accepted only when it equals the current partner.' },
});

export default class OrgsUpdate extends ApiCommand<typeof OrgsUpdate> {
  static override summary = 'Update an organization';
  static override examples = [
    '<%= config.bin %> orgs update 3b9e… --status suspended',
    '<%= config.bin %> orgs update 3b9e… --contract-end 2027-12-31T00:00:00Z --max-devices null',
  ];
  static override args = idArg('Organization');
  static override flags = { ...body.flags, ...updateFlags };

  async run() {
    return this.call(tenancy.updateOrganization, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
