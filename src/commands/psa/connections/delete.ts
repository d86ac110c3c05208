import { idArg } from '../../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { psa } from '../../../client/endpoints.js';

export default class PsaConnectionsDelete extends ApiCommand<typeof PsaConnectionsDelete> {
  static override summary = 'Delete a PSA connection with its credentials and ticket mappings (irrecoverably)';
  static override examples = ['<%= config.bin %> psa connections delete 61c7…', '<%= config.bin %> psa connections delete 61c7… --yes'];
  static override args = idArg('PSA connection');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete PSA connection ${this.args.id} with its credentials and ticket mappings irrecoverably?`);
    return this.call(psa.delete, { params: { id: this.args.id } });
  }
}
