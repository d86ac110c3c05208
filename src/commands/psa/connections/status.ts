import { bodyCommand } from '../../../cli/resource-commands.js';
import { psa } from '../../../client/endpoints.js';

export default bodyCommand(psa.status, {
  what: 'PSA connection',
  fromFile: false,
  summary: 'Set the status of a PSA connection: active, paused (opens no tickets) or error',
  examples: ['<%= config.bin %> psa connections status 61c7… --status paused'],
});
