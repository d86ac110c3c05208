import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const body = bodyFlags(tenancy.createSite, {
  descriptions: { orgId: 'The organization the site belongs to.', timezone: 'IANA time zone, e.g. Europe/Berlin.' },
});

export default class SitesCreate extends ApiCommand<typeof SitesCreate> {
  static override summary = 'Create a site in an organization';
  static override examples = [
    '<%= config.bin %> sites create --org-id 3b9e… --name HQ --timezone Europe/Berlin',
    '<%= config.bin %> sites create --org-id 3b9e… --name Lab --address \'{"city":"Berlin"}\'',
    '<%= config.bin %> sites create --from-file site.json',
  ];
  static override flags = { ...body.flags, ...createFlags };

  async run() {
    return this.call(tenancy.createSite, { body: await this.bodyFrom(body) });
  }
}
