import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { devices } from '../../client/endpoints.js';

export default class DevicesDecommission extends ApiCommand<typeof DevicesDecommission> {
  static override summary = "Decommission a device: its agent's token stops working at once";
  static override description = `The device stays listed with status decommissioned. Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = [
    '<%= config.bin %> devices decommission 0d3f…',
    '<%= config.bin %> devices decommission 0d3f… --yes',
  ];
  static override args = idArg('Device');
  static override flags = { ...mutationFlags };
  static override columns = ['device.id', 'device.hostname', 'device.status', 'message'];
  static override quietField = 'device.id';

  async run() {
    await this.confirm(`Decommission device ${this.args.id}? Its agent stops working at once.`);
    return this.call(devices.decommission, { params: { id: this.args.id } });
  }
}
