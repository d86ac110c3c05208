import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { UsageError } from '../../cli/prompts.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { groups } from '../../client/endpoints.js';

const body = bodyFlags(groups.update);

export default class GroupsUpdate extends ApiCommand<typeof GroupsUpdate> {
  static override summary = "Change a device group; new conditions re-evaluate a dynamic group's members (needs a session with MFA)";
  static override examples = ['<%= config.bin %> groups update 7d41… --name "Web servers"'];
  static override args = idArg('Group');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = ['id', 'name', 'type', 'orgId', 'siteId', 'deviceCount', 'parentId', 'updatedAt'];

  async run() {
    const patch = await this.bodyFrom(body);
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change');
    return (await this.call(groups.update, { params: { id: this.args.id }, body: patch })).data;
  }
}
