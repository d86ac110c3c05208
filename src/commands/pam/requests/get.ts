import { findableGetCommand } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default findableGetCommand(
  'Elevation request',
  {
    get: async (call, id) => (await call(pam.getRequest, { params: { id } })).request,
    list: async (call, query) => {
      const answer = await call(pam.listRequests, { query });
      return { data: answer.requests, pagination: answer.pagination };
    },
    paged: true,
  },
  {
    summary: 'Show an elevation request: what was asked, on which device, and how it was decided',
    examples: ['<%= config.bin %> pam requests get 2a7c…', '<%= config.bin %> pam requests get 2a7c… --output json'],
  },
);
