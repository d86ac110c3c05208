import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const body = bodyFlags(tenancy.updateSite, {
  descriptions: { orgId: 'Immutable: accepted only when it equals the current organization.', timezone: 'IANA time zone, e.g. Europe/Berlin.' },
});

export default class SitesUpdate extends ApiCommand<typeof SitesUpdate> {
  static override summary = 'Update a site';
  static override examples = ['<%= config.bin %> sites update 5d0a… --name "Head office"', '<%= config.bin %> sites update 5d0a… --contact null'];
  static override args = idArg('Site');
  static override flags = { ...body.flags, ...updateFlags };

  async run() {
    return this.call(tenancy.updateSite, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
