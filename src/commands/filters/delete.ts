import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { filters } from '../../client/endpoints.js';

export default class FiltersDelete extends ApiCommand<typeof FiltersDelete> {
  static override summary = 'Delete a saved filter (needs a session with MFA)';
  static override examples = ['<%= config.bin %> filters delete 7d41… --yes'];
  static override args = idArg('Saved filter');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete saved filter ${this.args.id}?`);
    return (await this.call(filters.delete, { params: { id: this.args.id } })).data;
  }
}
