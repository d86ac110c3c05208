import { Args } from '@oclif/core';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { groups } from '../../client/endpoints.js';

export default class GroupsPin extends ApiCommand<typeof GroupsPin> {
  static override summary = 'Pin a device into a dynamic group whatever its conditions say (needs a session with MFA)';
  static override examples = ['<%= config.bin %> groups pin 7d41… 0d3f…'];
  static override args = { id: Args.string({ required: true, description: 'Group id' }), deviceId: Args.string({ required: true, description: 'Device id' }) };
  static override flags = { ...mutationFlags };

  async run() {
    return (await this.call(groups.pin, { params: { id: this.args.id, deviceId: this.args.deviceId } })).data;
  }
}
