import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { apiKeys } from '../../client/endpoints.js';

const body = bodyFlags(apiKeys.update, {
  descriptions: { scopes: 'Replaces every scope of the key: resource:action (e.g. sites:read), or * where the deployment accepts it (the bundled server does).' },
});

export default class ApiKeysUpdate extends ApiCommand<typeof ApiKeysUpdate> {
  static override summary = 'Rename an active API key, or change its scopes or rate limit (needs a session with MFA)';
  static override examples = [
    '<%= config.bin %> api-keys update 9a2e… --name "CI pipeline (prod)"',
    '<%= config.bin %> api-keys update 9a2e… --scopes sites:read --scopes devices:read --rate-limit 5000',
  ];
  static override args = idArg('API key');
  static override flags = { ...body.flags, ...updateFlags };

  async run() {
    return this.call(apiKeys.update, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
