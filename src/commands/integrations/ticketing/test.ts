import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsTicketingTest extends ApiCommand<typeof IntegrationsTicketingTest> {
  static override summary = 'Call the ticketing API URL with the stored API key and report whether it was accepted';
  static override examples = ['<%= config.bin %> integrations ticketing test --org-id 3b9e…'];
  static override flags = { ...orgFlag, ...mutationFlags };

  async run() {
    return this.call(integrations.testTicketing, { query: orgQuery(this.flags), body: {} });
  }
}
