import { listCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default listCommand(tenancy.listSites, {
  summary: 'List sites',
  examples: [
    '<%= config.bin %> sites list --org-id 3b9e…',
    '<%= config.bin %> sites list --all --output jsonl | jq .name',
  ],
  columns: ['id', 'name', 'orgId', 'timezone', 'createdAt'],
  omit: ['organizationId'],
  descriptions: { orgId: 'Only the sites of this organization.' },
});
