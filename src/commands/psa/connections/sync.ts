import { idArg } from '../../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { psa } from '../../../client/endpoints.js';

export default class PsaConnectionsSync extends ApiCommand<typeof PsaConnectionsSync> {
  static override summary = 'Queue a sync that pulls the state of every mapped ticket from the provider';
  static override description = 'The sync runs in the background: follow it with `svc psa connections get ID` (lastSyncStatus queued, running, completed or failed, with lastSyncError).';
  static override examples = ['<%= config.bin %> psa connections sync 61c7…'];
  static override args = idArg('PSA connection');
  static override flags = { ...mutationFlags };

  async run() {
    return this.call(psa.sync, { params: { id: this.args.id } });
  }
}
