import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { enrollmentKeys } from '../../client/endpoints.js';

const ENROLLMENT_KEY_NOTICE = 'Store this enrollment key now: it will not be shown again.';

const body = bodyFlags(enrollmentKeys.rotate);

export default class EnrollmentKeysRotate extends ApiCommand<typeof EnrollmentKeysRotate> {
  static override summary = 'Issue new key material and reset the usage count; the old key stops working at once';
  static override description = `Optionally changes the cap (--max-usage, "null" for unlimited) and the lifetime (--ttl-minutes from now, or --expires-at). With --quiet only the new key is printed. Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = [
    '<%= config.bin %> enrollment-keys rotate 61c7…',
    'KEY=$(<%= config.bin %> enrollment-keys rotate 61c7… --ttl-minutes 60 --yes --quiet)',
  ];
  static override args = idArg('Enrollment key');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = ['id', 'name', 'key', 'orgId', 'siteId', 'usageCount', 'maxUsage', 'expiresAt'];
  static override secretField = 'key';
  static override secretNotice = ENROLLMENT_KEY_NOTICE;

  async run() {
    const request = { params: { id: this.args.id }, body: await this.bodyFrom(body) };
    await this.confirm(`Rotate enrollment key ${this.args.id}? The current key stops working at once.`);
    return this.call(enrollmentKeys.rotate, request);
  }
}
