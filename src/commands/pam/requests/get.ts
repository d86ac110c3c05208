import { findableGetCommand } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default findableGetCommand(
  'Elevation request',
  { def: pam.getRequest, pick: (answer) => answer.request },
  { def: pam.listRequests, paged: true, items: (answer) => ({ data: answer.requests, pagination: answer.pagination }) },
  {
    summary: 'Show an elevation request: what was asked, on which device, and how it was decided',
    examples: ['<%= config.bin %> pam requests get 2a7c…', '<%= config.bin %> pam requests get 2a7c… --output json'],
  },
);
