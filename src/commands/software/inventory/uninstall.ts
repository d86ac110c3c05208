import { Args } from '../../../cli/flags.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { DEPLOYMENT_COLUMNS } from '../../../cli/software-columns.js';
import { software } from '../../../client/endpoints.js';

const body = bodyFlags(software.uninstall, { fromFile: false });

export default class SoftwareInventoryUninstall extends ApiCommand<typeof SoftwareInventoryUninstall> {
  static override summary = 'Uninstall one installed item from its device: an uninstall deployment of that device (needs a session with MFA)';
  static override examples = [
    '<%= config.bin %> software inventory uninstall 0d3f… 5b7e… --requested-by ops@example.com --yes',
    '<%= config.bin %> software inventory uninstall 0d3f… 5b7e… --requested-by ops --reason "licence expired" --schedule-at 2026-12-01T02:00:00Z --yes',
  ];
  static override args = {
    deviceId: Args.string({ required: true, description: 'Device id' }),
    softwareId: Args.string({ required: true, description: 'Inventory item id (softwareId of `svc software inventory get`)' }),
  };
  static override flags = { ...body.flags, ...mutationFlags };
  static override columns = DEPLOYMENT_COLUMNS;

  // 05 wire notes 4.3: the current hosted build moved this route to POST /devices/:id/software/uninstall, with a
  // body the notes do not show: svc does not guess it, and names what works there instead.
  protected override missingRouteHint(): string {
    return (
      'A newer hosted release serves uninstall at POST /devices/:id/software/uninstall, which svc does not call. For software of the catalog, ' +
      '`svc software deployments create --software-id <catalogId> --action uninstall --device-ids <deviceId> --requested-by <name>` does the same.'
    );
  }

  async run() {
    const { deviceId, softwareId } = this.args;
    await this.confirm(`Uninstall ${softwareId} from device ${deviceId}?`);
    return (await this.call(software.uninstall, { params: { deviceId, softwareId }, body: await this.bodyFrom(body) })).data;
  }
}
