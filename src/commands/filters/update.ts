import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { UsageError } from '../../cli/prompts.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { filters } from '../../client/endpoints.js';

const body = bodyFlags(filters.update);

export default class FiltersUpdate extends ApiCommand<typeof FiltersUpdate> {
  static override summary = 'Change a saved filter: only the fields given (needs a session with MFA)';
  static override examples = ['<%= config.bin %> filters update 7d41… --name "Stale servers"', '<%= config.bin %> filters update 7d41… --description null'];
  static override args = idArg('Saved filter');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = ['id', 'name', 'orgId', 'description', 'createdAt', 'updatedAt'];

  async run() {
    const patch = await this.bodyFrom(body);
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change: give --name, --description or --conditions');
    return (await this.call(filters.update, { params: { id: this.args.id }, body: patch })).data;
  }
}
