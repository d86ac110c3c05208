import { idArg } from '../../cli/args.js';
import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { deviceCommands } from '../../client/endpoints.js';

const body = bodyFlags(deviceCommands.create);

export default class DevicesCommand extends ApiCommand<typeof DevicesCommand> {
  static override summary = "Queue a command for a device's agent (needs a session with MFA)";
  static override description = `Types: reboot, reboot_safe_mode, shutdown, update, collect_evidence, execute_containment, wake, refresh_inventory. The agent picks the command up on its next fetch; scripts run through \`svc scripts run\`.`;
  static override examples = [
    '<%= config.bin %> devices command 0d3f… --type reboot',
    '<%= config.bin %> devices command 0d3f… --type update --payload \'{"channel":"stable"}\'',
  ];
  static override args = idArg('Device');
  static override flags = { ...body.flags, ...createFlags };
  static override columns = ['id', 'deviceId', 'type', 'status', 'createdAt'];

  async run() {
    return this.call(deviceCommands.create, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
