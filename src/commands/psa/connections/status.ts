import { idArg } from '../../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { psa } from '../../../client/endpoints.js';

const body = bodyFlags(psa.status);

export default class PsaConnectionsStatus extends ApiCommand<typeof PsaConnectionsStatus> {
  static override summary = 'Set the status of a PSA connection: active, paused (opens no tickets) or error';
  static override examples = ['<%= config.bin %> psa connections status 61c7… --status paused'];
  static override args = idArg('PSA connection');
  static override flags = { ...body.flags, ...mutationFlags };

  async run() {
    return this.call(psa.status, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
