import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { scripts } from '../../client/endpoints.js';

export default class ScriptsDelete extends ApiCommand<typeof ScriptsDelete> {
  static override summary = 'Delete a script (refused while it has runs pending or running)';
  static override description = 'Its past runs stay listed under its name. Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).';
  static override examples = ['<%= config.bin %> scripts delete 7a1c… --yes'];
  static override args = idArg('Script');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete script ${this.args.id}?`);
    return this.call(scripts.delete, { params: { id: this.args.id } });
  }
}
