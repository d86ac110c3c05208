import { listCommand } from '../../cli/resource-commands.js';
import { enrollmentKeys } from '../../client/endpoints.js';

export default listCommand(enrollmentKeys.list, {
  summary: 'List enrollment keys, newest first (metadata only)',
  examples: [
    '<%= config.bin %> enrollment-keys list',
    '<%= config.bin %> enrollment-keys list --org-id 3b9e… --expired false',
    '<%= config.bin %> enrollment-keys list --site-id 5d0a… --all --output jsonl',
  ],
  columns: ['id', 'name', 'orgId', 'siteId', 'usageCount', 'maxUsage', 'expiresAt', 'createdAt'],
});
