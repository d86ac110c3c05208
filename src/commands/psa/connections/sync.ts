import { confirmCommand } from '../../../cli/resource-commands.js';
import { psa } from '../../../client/endpoints.js';

export default confirmCommand(psa.sync, 'PSA connection', {
  summary: 'Queue a sync that pulls the state of every mapped ticket from the provider',
  description: 'The sync runs in the background: follow it with `svc psa connections get ID` (lastSyncStatus queued, running, completed or failed, with lastSyncError).',
  examples: ['<%= config.bin %> psa connections sync 61c7…'],
});
