import { confirmCommand } from '../../../cli/resource-commands.js';
import { mobile } from '../../../client/endpoints.js';

export default confirmCommand(mobile.removeDevice, 'registered phone', {
  summary: 'Remove a registered phone; it gets no more pushes',
  examples: ['<%= config.bin %> mobile devices delete 5f2e… --yes'],
  confirm: (id) => `Remove the registered phone ${id}?`,
});
