import { ApiCommand } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { pam } from '../../client/endpoints.js';

const def = pam.listActive;
const filters = queryFlags(def, {
  descriptions: { orgId: 'Only elevations of this organization.', deviceId: 'Only elevations on this device.' },
});

export default class PamActive extends ApiCommand<typeof PamActive> {
  static override summary =
    'Elevations in force now (approved, auto-approved or actuating, not yet expired), soonest expiry first';
  static override description = `At most 500. Revoke one with \`svc pam requests revoke ID --reason TEXT\`.`;
  static override aliases = ['pam:requests:active'];
  static override examples = [
    '<%= config.bin %> pam active',
    '<%= config.bin %> pam active --device-id 0d3f… --output json',
  ];
  static override flags = { ...filters.flags };
  static override columns = [
    'id',
    'status',
    'enforcementStatus',
    'deviceHostname',
    'subjectUsername',
    'targetExecutablePath',
    'toolName',
    'approvedByName',
    'expiresAt',
  ];

  async run() {
    return (await this.call(pam.listActive, { query: this.queryFrom(filters) })).active;
  }
}
