import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { enrollmentKeys } from '../../client/endpoints.js';

const body = bodyFlags(enrollmentKeys.create);

const ENROLLMENT_KEY_NOTICE = 'Store this enrollment key now: it will not be shown again.';

export default class EnrollmentKeysCreate extends ApiCommand<typeof EnrollmentKeysCreate> {
  static override summary =
    'Create an enrollment key for agents to enroll devices with; the key is shown once (needs a session with MFA)';
  static override description = `Give the lifetime as --ttl-minutes or --expires-at (not both; default: the server's TTL). --max-usage caps how many devices may enroll with it (default 1). With --quiet only the key is printed, so it can be captured; the shown-once warning goes to stderr.`;
  static override examples = [
    '<%= config.bin %> enrollment-keys create --org-id 3b9e… --name "Berlin rollout" --max-usage 50 --ttl-minutes 1440',
    'KEY=$(<%= config.bin %> enrollment-keys create --org-id 3b9e… --site-id 5d0a… --name lab --quiet)',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = ['id', 'name', 'key', 'orgId', 'siteId', 'maxUsage', 'expiresAt'];
  static override secretField = 'key';
  static override secretNotice = ENROLLMENT_KEY_NOTICE;

  async run() {
    return this.call(enrollmentKeys.create, { body: await this.bodyFrom(body) });
  }
}
