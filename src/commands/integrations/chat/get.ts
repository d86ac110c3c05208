import { orgSettingsCommand } from '../../../cli/integration-commands.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsCommand(integrations.communication, {
  summary: 'Show the chat provider settings (Slack, Teams, Discord) of an organization, webhook URLs masked',
  examples: ['<%= config.bin %> integrations chat get --org-id 3b9e…', '<%= config.bin %> integrations chat get -o json'],
  pick: (answer) => answer.data,
});
