import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { scripts } from '../../client/endpoints.js';

const body = bodyFlags(scripts.update);

export default class ScriptsUpdate extends ApiCommand<typeof ScriptsUpdate> {
  static override summary = 'Change a script; its version goes up by one (system scripts are read-only)';
  static override examples = ['<%= config.bin %> scripts update 7a1c… --timeout-seconds 600', '<%= config.bin %> scripts update 7a1c… --from-file script.yaml'];
  static override args = idArg('Script');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = ['id', 'name', 'language', 'osTypes', 'timeoutSeconds', 'runAs', 'version'];

  async run() {
    return this.call(scripts.update, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
