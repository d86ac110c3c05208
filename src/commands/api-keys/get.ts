import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { apiKeys } from '../../client/endpoints.js';

export default class ApiKeysGet extends ApiCommand<typeof ApiKeysGet> {
  static override summary = "Show an API key's metadata (never the key itself)";
  static override examples = [
    '<%= config.bin %> api-keys get 9a2e…',
    '<%= config.bin %> api-keys get 9a2e… --output json',
  ];
  static override args = idArg('API key');

  async run() {
    return this.call(apiKeys.get, { params: { id: this.args.id } });
  }
}
