import { listCommand } from '../../../cli/resource-commands.js';
import { CHANNEL_COLUMNS } from '../../../cli/alert-columns.js';
import { alertChannels } from '../../../client/endpoints.js';

export default listCommand(alertChannels.list, {
  summary: 'List notification channels, most recently updated first (secrets masked)',
  examples: [
    '<%= config.bin %> alerts channels list',
    '<%= config.bin %> alerts channels list --org-id 3b9e… --type webhook --enabled true',
  ],
  columns: CHANNEL_COLUMNS,
});
