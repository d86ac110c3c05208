import { confirmCommand } from '../../../cli/resource-commands.js';
import { sso } from '../../../client/endpoints.js';

export default confirmCommand(sso.deleteProvider, 'SSO provider', {
  summary: 'Delete an SSO provider with its identity links (its users keep their accounts)',
  examples: ['<%= config.bin %> sso providers delete 61c7…', '<%= config.bin %> sso providers delete 61c7… --yes'],
  confirm: (id) => `Delete SSO provider ${id}? Its users can no longer sign in through it.`,
});
