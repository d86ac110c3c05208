import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { API_KEY_WARNING, apiKeys } from '../../client/endpoints.js';

const body = bodyFlags(apiKeys.create, {
  descriptions: { scopes: 'Permissions of the key, resource:action (e.g. sites:read), or * for all where the deployment accepts it (the bundled server does); default none.' },
});

export default class ApiKeysCreate extends ApiCommand<typeof ApiKeysCreate> {
  static override summary = 'Create an API key for an organization; the key is shown once (needs a session with MFA)';
  static override description = `The new key is printed once and cannot be retrieved again; the warning goes to stderr. With --quiet only the key is printed, so it can be captured: KEY=$(svc api-keys create … -q). --output json prints the whole answer (metadata, key and warning).

A key's scopes must be permissions its creator holds. The bundled server knows every named permission (\`svc roles permissions\` lists them, e.g. devices:read, sites:read, audit:read) and *; a hosted deployment may accept only a fixed list and refuse *, so the examples use resource:action scopes that both accept. A hosted deployment may also accept API keys on a few routes only: a 401 with a key says so. Key management needs a user session with MFA (\`svc mfa setup\`), never an API key.`;
  static override examples = [
    '<%= config.bin %> api-keys create --org-id 3b9e… --name "CI pipeline" --scopes sites:read,devices:read',
    'KEY=$(<%= config.bin %> api-keys create --org-id 3b9e… --name backup --scopes devices:read --expires-at 2027-01-01T00:00:00Z --quiet)',
    '<%= config.bin %> api-keys create --from-file key.yaml --idempotency-key ci-run-42 --output json',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = ['id', 'name', 'key', 'keyPrefix', 'orgId', 'scopes', 'expiresAt', 'rateLimit', 'status'];
  static override secretField = 'key';
  static override secretNotice = API_KEY_WARNING;

  async run() {
    return this.call(apiKeys.create, { body: await this.bodyFrom(body) });
  }
}
