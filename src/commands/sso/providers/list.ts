import { ApiCommand } from '../../../cli/api-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { sso } from '../../../client/endpoints.js';

const filters = queryFlags(sso.listProviders);

const PROVIDER_COLUMNS = ['id', 'name', 'type', 'status', 'issuer', 'autoProvision', 'enforceSSO', 'createdAt'];

export default class SsoProvidersList extends ApiCommand<typeof SsoProvidersList> {
  static override summary = "List an organization's SSO providers";
  static override examples = ['<%= config.bin %> sso providers list --org-id 3b9e…', '<%= config.bin %> sso providers list --output json'];
  static override flags = { ...filters.flags };
  static override columns = PROVIDER_COLUMNS;

  async run() {
    return (await this.call(sso.listProviders, { query: this.queryFrom(filters) })).data;
  }
}
