import { findableGetCommand } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default findableGetCommand(
  'Elevation rule',
  {
    get: async (call, id) => (await call(pam.getRule, { params: { id } })).rule,
    list: async (call, query) => (await call(pam.listRules, { query })).rules,
  },
  {
    summary: 'Show an elevation rule',
    examples: ['<%= config.bin %> pam rules get 7d41…', '<%= config.bin %> pam rules get 7d41… --output yaml > rule.yaml'],
  },
);
