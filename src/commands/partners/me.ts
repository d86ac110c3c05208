import { ApiCommand } from '../../cli/api-command.js';
import { tenancy } from '../../client/endpoints.js';

export default class PartnersMe extends ApiCommand<typeof PartnersMe> {
  static override summary = "Show the caller's own partner (partner-scope users)";
  static override examples = ['<%= config.bin %> partners me', '<%= config.bin %> partners me --output json'];

  async run() {
    return this.call(tenancy.getMyPartner);
  }
}
