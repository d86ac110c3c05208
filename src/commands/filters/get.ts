import { ApiCommand } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { filters } from '../../client/endpoints.js';

export default class FiltersGet extends ApiCommand<typeof FiltersGet> {
  static override summary = 'Show a saved filter with its conditions';
  static override examples = ['<%= config.bin %> filters get 7d41… --output json'];
  static override args = idArg('Saved filter');

  async run() {
    return (await this.call(filters.get, { params: { id: this.args.id } })).data;
  }
}
