import { updateCommand } from '../../cli/resource-commands.js';
import { mobile } from '../../client/endpoints.js';

export default updateCommand(mobile.action, 'managed device', {
  summary: 'Reboot, wake or run a script on a managed device',
  examples: [
    '<%= config.bin %> mobile actions 7d1c… --action reboot',
    '<%= config.bin %> mobile actions 7d1c… --action run_script --script-id 0b4a…',
    '<%= config.bin %> mobile actions 7d1c… --action wake',
  ],
  columns: ['action', 'commandId', 'executionId', 'wakeAttemptId'],
});
