import { createCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default createCommand(tenancy.createOrganization, {
  summary: 'Create an organization',
  examples: [
    '<%= config.bin %> orgs create --partner-id 7f1c… --name Contoso --slug contoso',
    '<%= config.bin %> orgs create --name Contoso --slug contoso --type customer --max-devices 500',
    '<%= config.bin %> orgs create --from-file org.yaml --idempotency-key ci-run-42',
  ],
  descriptions: { partnerId: 'The partner that owns it (system callers; partner callers default to their own).' },
});
