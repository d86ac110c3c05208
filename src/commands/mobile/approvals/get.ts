import { getCommand } from '../../../cli/resource-commands.js';
import { mobile } from '../../../client/endpoints.js';

export default getCommand(mobile.approval, 'elevation request', {
  summary: 'Show one elevation request of the approvals inbox',
  examples: ['<%= config.bin %> mobile approvals get 9c3e…'],
  pick: (answer) => answer.approval,
});
