import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { API_KEY_WARNING, apiKeys } from '../../client/endpoints.js';

export default class ApiKeysRotate extends ApiCommand<typeof ApiKeysRotate> {
  static override summary =
    'Replace the key material of an API key; the old key stops working at once (needs a session with MFA)';
  static override description = `The key keeps its id, name, scopes and rate limit; the new key is printed once and the warning goes to stderr. With --quiet only the new key is printed, one line, so a CI job can capture it:

  NEW=$(svc api-keys rotate "$KEY_ID" --yes --quiet)

--output json prints the whole answer (metadata, key and warning). Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = [
    '<%= config.bin %> api-keys rotate 9a2e…',
    'NEW=$(<%= config.bin %> api-keys rotate 9a2e… --yes --quiet)',
    '<%= config.bin %> api-keys rotate 9a2e… --yes --output json',
  ];
  static override args = idArg('API key');
  static override flags = { ...mutationFlags };
  static override columns = ['id', 'name', 'key', 'keyPrefix', 'scopes', 'status'];
  static override secretField = 'key';
  static override secretNotice = API_KEY_WARNING;

  async run() {
    await this.confirm(`Rotate API key ${this.args.id}? The current key stops working at once.`);
    return this.call(apiKeys.rotate, { params: { id: this.args.id } });
  }
}
