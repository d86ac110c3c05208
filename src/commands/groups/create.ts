import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { groups } from '../../client/endpoints.js';

const body = bodyFlags(groups.create);

export default class GroupsCreate extends ApiCommand<typeof GroupsCreate> {
  static override summary = 'Create a device group: static, or dynamic from --conditions or a saved --filter-id (needs a session with MFA)';
  static override examples = [
    '<%= config.bin %> groups create --org-id 3b9e… --name "Stale Windows" --filter-id 7d41…',
    `<%= config.bin %> groups create --org-id 3b9e… --name Servers --filter-conditions '{"operator":"AND","conditions":[{"field":"deviceRole","operator":"equals","value":"server"}]}'`,
    '<%= config.bin %> groups create --org-id 3b9e… --name Lab --device-ids 0d3f…,9a1c…',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = ['id', 'name', 'type', 'orgId', 'siteId', 'deviceCount', 'parentId', 'updatedAt'];

  async run() {
    return (await this.call(groups.create, { body: await this.bodyFrom(body) })).data;
  }
}
