import { ApiCommand } from '../../cli/api-command.js';
import { sso } from '../../client/endpoints.js';

export default class SsoPresets extends ApiCommand<typeof SsoPresets> {
  static override summary = 'List the SSO provider presets (four OpenID Connect, five SAML) with their scopes and attribute mappings';
  static override examples = ['<%= config.bin %> sso presets', '<%= config.bin %> sso presets --output json'];
  static override columns = ['id', 'name', 'type', 'scopes', 'issuerTemplate', 'ssoUrlTemplate'];

  async run() {
    return (await this.call(sso.presets, {})).data;
  }
}
