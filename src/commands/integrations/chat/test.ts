import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { Args } from '../../../cli/flags.js';
import { orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsChatTest extends ApiCommand<typeof IntegrationsChatTest> {
  static override summary = 'Queue a test notification to a chat provider’s stored webhook URL (see `chat get` for the outcome)';
  static override examples = ['<%= config.bin %> integrations chat test slack --org-id 3b9e…'];
  static override args = { provider: Args.string({ required: true, description: 'Chat provider', options: ['slack', 'teams', 'discord'] }) };
  static override flags = { ...orgFlag, ...mutationFlags };

  async run() {
    // Named one by one so the endpoint each provider posts to is plain to read (and to the --dry-run check).
    const endpoint = { slack: integrations.slack, teams: integrations.teams, discord: integrations.discord }[this.args.provider as 'slack' | 'teams' | 'discord'];
    return this.call(endpoint, { query: orgQuery(this.flags), body: { test: true } });
  }
}
