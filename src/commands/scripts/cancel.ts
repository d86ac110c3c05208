import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { scripts } from '../../client/endpoints.js';

export default class ScriptsCancel extends ApiCommand<typeof ScriptsCancel> {
  static override summary = 'Cancel a script run that is pending or running';
  static override examples = ['<%= config.bin %> scripts cancel 0e5b…'];
  static override args = idArg('Script execution');
  static override flags = { ...mutationFlags };
  static override columns = ['execution.id', 'execution.status', 'execution.completedAt'];
  static override quietField = 'execution.id';

  async run() {
    return this.call(scripts.cancel, { params: { id: this.args.id } });
  }
}
