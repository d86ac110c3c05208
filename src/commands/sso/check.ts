import { Args } from '../../cli/flags.js';
import { ApiCommand } from '../../cli/api-command.js';
import { sso } from '../../client/endpoints.js';

export default class SsoCheck extends ApiCommand<typeof SsoCheck> {
  static override summary = "Show whether an organization signs in with SSO: its active provider's name, type and enforcement (no sign-in needed)";
  static override examples = ['<%= config.bin %> sso check 3b9e…'];
  static override args = { orgId: Args.string({ required: true, description: 'Organization id' }) };
  static override columns = ['ssoEnabled', 'name', 'type', 'enforceSSO'];

  async run() {
    const answer = await this.call(sso.check, { params: { orgId: this.args.orgId } }, { anonymous: true });
    return { ssoEnabled: answer.ssoEnabled, name: answer.provider?.name ?? null, type: answer.provider?.type ?? null, enforceSSO: answer.provider?.enforceSSO ?? false };
  }
}
