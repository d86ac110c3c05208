import { confirmCommand } from '../../cli/resource-commands.js';
import { scripts } from '../../client/endpoints.js';

export default confirmCommand(scripts.delete, 'Script', {
  summary: 'Delete a script (refused while it has runs pending or running)',
  description: 'Its past runs stay listed under its name. Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).',
  examples: ['<%= config.bin %> scripts delete 7a1c… --yes'],
  confirm: (id) => `Delete script ${id}?`,
});
