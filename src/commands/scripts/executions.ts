import { idArg } from '../../cli/args.js';
import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { scripts } from '../../client/endpoints.js';

const filters = queryFlags(scripts.executions, { omit: ['page', 'limit'] });

export default class ScriptsExecutions extends ApiCommand<typeof ScriptsExecutions> {
  static override summary = "List a script's runs, newest first (one per device)";
  static override examples = ['<%= config.bin %> scripts executions 7a1c…', '<%= config.bin %> scripts executions 7a1c… --status failed -o json'];
  static override args = idArg('Script');
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'deviceId', 'status', 'exitCode', 'severity', 'startedAt', 'completedAt'];

  async run() {
    return this.list(scripts.executions, { params: { id: this.args.id }, query: this.queryFrom(filters) });
  }
}
