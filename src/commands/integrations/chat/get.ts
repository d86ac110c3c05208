import { ApiCommand } from '../../../cli/api-command.js';
import { orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsChatGet extends ApiCommand<typeof IntegrationsChatGet> {
  static override summary = 'Show the chat provider settings (Slack, Teams, Discord) of an organization, webhook URLs masked';
  static override examples = ['<%= config.bin %> integrations chat get --org-id 3b9e…', '<%= config.bin %> integrations chat get -o json'];
  static override flags = { ...orgFlag };

  async run() {
    return (await this.call(integrations.communication, { query: orgQuery(this.flags) })).data;
  }
}
