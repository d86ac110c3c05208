import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { enrollmentKeys } from '../../client/endpoints.js';

const def = enrollmentKeys.list;
const filters = queryFlags(def, { omit: ['page', 'limit'] });

export default class EnrollmentKeysList extends ApiCommand<typeof EnrollmentKeysList> {
  static override summary = 'List enrollment keys, newest first (metadata only)';
  static override examples = [
    '<%= config.bin %> enrollment-keys list',
    '<%= config.bin %> enrollment-keys list --org-id 3b9e… --expired false',
    '<%= config.bin %> enrollment-keys list --site-id 5d0a… --all --output jsonl',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'name', 'orgId', 'siteId', 'usageCount', 'maxUsage', 'expiresAt', 'createdAt'];

  async run() {
    const query = this.queryFrom(filters);
    return this.list(enrollmentKeys.list, { query });
  }
}
