import { ApiCommand } from '../../../cli/api-command.js';
import { orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsTicketingGet extends ApiCommand<typeof IntegrationsTicketingGet> {
  static override summary = 'Show the ticketing settings of an organization (API key masked; {} when none)';
  static override examples = ['<%= config.bin %> integrations ticketing get --org-id 3b9e…'];
  static override flags = { ...orgFlag };

  async run() {
    return this.call(integrations.getTicketing, { query: orgQuery(this.flags) });
  }
}
