import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { audit } from '../../client/endpoints.js';

export default class AuditGet extends ApiCommand<typeof AuditGet> {
  static override summary = 'Show one audit log entry';
  static override examples = ['<%= config.bin %> audit get 0c4f…', '<%= config.bin %> audit get 0c4f… --output json'];
  static override args = idArg('Audit entry');

  async run() {
    return this.call(audit.get, { params: { id: this.args.id } });
  }
}
