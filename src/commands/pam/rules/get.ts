import { findableGetCommand } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default findableGetCommand(
  'Elevation rule',
  { def: pam.getRule, pick: (answer) => answer.rule },
  { def: pam.listRules, items: (answer) => answer.rules },
  {
    summary: 'Show an elevation rule',
    examples: ['<%= config.bin %> pam rules get 7d41…', '<%= config.bin %> pam rules get 7d41… --output yaml > rule.yaml'],
  },
);
