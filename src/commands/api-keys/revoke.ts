import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { apiKeys } from '../../client/endpoints.js';

export default class ApiKeysRevoke extends ApiCommand<typeof ApiKeysRevoke> {
  static override summary = 'Revoke an API key: it stops working at once, permanently (needs a session with MFA)';
  static override description = `Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = [
    '<%= config.bin %> api-keys revoke 9a2e…',
    '<%= config.bin %> api-keys revoke 9a2e… --yes',
  ];
  static override args = idArg('API key');
  static override flags = { ...mutationFlags };
  static override columns = ['apiKey.id', 'apiKey.name', 'apiKey.keyPrefix', 'apiKey.status', 'message'];
  static override quietField = 'apiKey.id';

  async run() {
    await this.confirm(`Revoke API key ${this.args.id}? Everything that uses it stops working at once, permanently.`);
    return this.call(apiKeys.revoke, { params: { id: this.args.id } });
  }
}
