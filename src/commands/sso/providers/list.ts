import { queryCommand } from '../../../cli/resource-commands.js';
import { sso } from '../../../client/endpoints.js';

export default queryCommand(sso.listProviders, {
  summary: "List an organization's SSO providers",
  examples: ['<%= config.bin %> sso providers list --org-id 3b9e…', '<%= config.bin %> sso providers list --output json'],
  columns: ['id', 'name', 'type', 'status', 'issuer', 'autoProvision', 'enforceSSO', 'createdAt'],
  pick: (answer) => answer.data,
});
