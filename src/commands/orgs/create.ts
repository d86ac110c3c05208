import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const body = bodyFlags(tenancy.createOrganization, {
  descriptions: { partnerId: 'The partner that owns it (system callers; partner callers default to their own).' },
});

export default class OrgsCreate extends ApiCommand<typeof OrgsCreate> {
  static override summary = 'Create an organization';
  static override examples = [
    '<%= config.bin %> orgs create --partner-id 7f1c… --name Contoso --slug contoso',
    '<%= config.bin %> orgs create --name Contoso --slug contoso --type customer --max-devices 500',
    '<%= config.bin %> orgs create --from-file org.yaml --idempotency-key ci-run-42',
  ];
  static override flags = { ...body.flags, ...createFlags };

  async run() {
    return this.call(tenancy.createOrganization, { body: await this.bodyFrom(body) });
  }
}
