import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { devices } from '../../client/endpoints.js';

export default class DevicesGet extends ApiCommand<typeof DevicesGet> {
  static override summary = 'Show a device';
  static override examples = [
    '<%= config.bin %> devices get 0d3f…',
    '<%= config.bin %> devices get 0d3f… --output json',
  ];
  static override args = idArg('Device');

  async run() {
    return this.call(devices.get, { params: { id: this.args.id } });
  }
}
