import { updateCommand } from '../../cli/resource-commands.js';
import { scripts } from '../../client/endpoints.js';

export default updateCommand(scripts.update, 'Script', {
  summary: 'Change a script; its version goes up by one (system scripts are read-only)',
  examples: ['<%= config.bin %> scripts update 7a1c… --timeout-seconds 600', '<%= config.bin %> scripts update 7a1c… --from-file script.yaml'],
  columns: ['id', 'name', 'language', 'osTypes', 'timeoutSeconds', 'runAs', 'version'],
});
