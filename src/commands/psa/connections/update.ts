import { idArg } from '../../../cli/args.js';
import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { credentialsFlags, credentialsFrom } from '../../../cli/psa-flags.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { psa } from '../../../client/endpoints.js';

const body = bodyFlags(psa.update, { omit: ['credentials'] });

export default class PsaConnectionsUpdate extends ApiCommand<typeof PsaConnectionsUpdate> {
  static override summary = 'Change a PSA connection: name, settings, enabled, or credentials (replaced as a whole)';
  static override description = 'New credentials come from --credentials-stdin or --credentials-file (a JSON object) and replace the stored ones at once. --settings replaces the whole settings object.';
  static override examples = [
    '<%= config.bin %> psa connections update 61c7… --name "Service desk"',
    '<%= config.bin %> psa connections update 61c7… --credentials-file ./servicenow.json',
  ];
  static override args = idArg('PSA connection');
  static override flags = { ...body.flags, ...credentialsFlags, ...updateFlags };
  static override columns = ['id', 'name', 'provider', 'status', 'enabled', 'orgId', 'hasCredentials'];

  async run() {
    const credentials = await credentialsFrom(this.flags);
    return this.call(psa.update, { params: { id: this.args.id }, body: { ...(await this.bodyFrom(body)), ...(credentials ? { credentials } : {}) } });
  }
}
