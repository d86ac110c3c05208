import { idArg } from '../../../cli/args.js';
import { ApiCommand } from '../../../cli/api-command.js';
import { psa } from '../../../client/endpoints.js';

export default class PsaConnectionsGet extends ApiCommand<typeof PsaConnectionsGet> {
  static override summary = 'Show a PSA connection (never its credentials)';
  static override examples = ['<%= config.bin %> psa connections get 61c7…', '<%= config.bin %> psa connections get 61c7… --output yaml'];
  static override args = idArg('PSA connection');

  async run() {
    return (await this.call(psa.get, { params: { id: this.args.id } })).data;
  }
}
