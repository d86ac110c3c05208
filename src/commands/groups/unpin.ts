import { Args } from '@oclif/core';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { groups } from '../../client/endpoints.js';

export default class GroupsUnpin extends ApiCommand<typeof GroupsUnpin> {
  static override summary = 'Unpin a device from a dynamic group; it stays only while the conditions match (needs a session with MFA)';
  static override examples = ['<%= config.bin %> groups unpin 7d41… 0d3f…'];
  static override args = { id: Args.string({ required: true, description: 'Group id' }), deviceId: Args.string({ required: true, description: 'Device id' }) };
  static override flags = { ...mutationFlags };

  async run() {
    return (await this.call(groups.unpin, { params: { id: this.args.id, deviceId: this.args.deviceId } })).data;
  }
}
