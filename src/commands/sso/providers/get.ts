import { getCommand } from '../../../cli/resource-commands.js';
import { sso } from '../../../client/endpoints.js';

export default getCommand(sso.getProvider, 'SSO provider', {
  summary: 'Show an SSO provider (never its client secret, only whether one is stored)',
  examples: ['<%= config.bin %> sso providers get 61c7…', '<%= config.bin %> sso providers get 61c7… --output yaml'],
  pick: (answer) => answer.data,
});
