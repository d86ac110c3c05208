import { Args } from '@oclif/core';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { groups } from '../../client/endpoints.js';

export default class GroupsRemove extends ApiCommand<typeof GroupsRemove> {
  static override summary = 'Remove a device from a static group (needs a session with MFA)';
  static override examples = ['<%= config.bin %> groups remove 7d41… 0d3f…'];
  static override args = { id: Args.string({ required: true, description: 'Group id' }), deviceId: Args.string({ required: true, description: 'Device id' }) };
  static override flags = { ...mutationFlags };

  async run() {
    return (await this.call(groups.removeMember, { params: { id: this.args.id, deviceId: this.args.deviceId } })).data;
  }
}
