import { Args } from '@oclif/core';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { groups } from '../../client/endpoints.js';

export default class GroupsAdd extends ApiCommand<typeof GroupsAdd> {
  static override summary = 'Add devices to a static group (needs a session with MFA)';
  static override examples = ['<%= config.bin %> groups add 7d41… 0d3f… 9a1c…'];
  static override strict = false;
  static override args = { id: Args.string({ required: true, description: 'Group id' }), deviceId: Args.string({ required: true, description: 'Device ids' }) };
  static override flags = { ...mutationFlags };

  async run() {
    const deviceIds = [...new Set([String(this.args.deviceId), ...this.extraArgs])];
    return (await this.call(groups.addMembers, { params: { id: this.args.id }, body: { deviceIds } })).data;
  }
}
