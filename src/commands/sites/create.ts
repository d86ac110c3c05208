import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { flagsFor } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const body = flagsFor(tenancy.createSite.body, {
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
    return this.send(tenancy.createSite, { body: (await this.bodyFrom(body.fields)) as never });
  }
}
