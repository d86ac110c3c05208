import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { Flags } from '../../../cli/flags.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { readSecretFromStdin } from '../../../cli/stdin.js';
import { sso } from '../../../client/endpoints.js';

const body = bodyFlags(sso.updateProvider, { omit: ['clientSecret'] });

export default class SsoProvidersUpdate extends ApiCommand<typeof SsoProvidersUpdate> {
  static override summary = 'Change an SSO provider: only the fields given (needs a session with MFA)';
  static override description = `A changed --issuer is discovered again. --client-secret-stdin replaces the secret; --clear-client-secret removes it.`;
  static override examples = [
    '<%= config.bin %> sso providers update 61c7… --allowed-domains example.com,example.org --enforce-sso',
    'printf %s "$SECRET" | <%= config.bin %> sso providers update 61c7… --client-secret-stdin',
  ];
  static override args = idArg('SSO provider');
  static override flags = {
    ...body.flags,
    'client-secret-stdin': Flags.boolean({ summary: 'Read a new OAuth client secret from standard input.', exclusive: ['clear-client-secret'] }),
    'clear-client-secret': Flags.boolean({ summary: 'Remove the stored client secret.' }),
    ...updateFlags,
  };
  static override columns = ['id', 'name', 'type', 'status', 'issuer', 'enforceSSO', 'hasClientSecret', 'updatedAt'];

  async run() {
    const patch: Record<string, unknown> = { ...(await this.bodyFrom(body)) };
    if (this.flags['client-secret-stdin']) patch.clientSecret = await readSecretFromStdin('--client-secret-stdin');
    if (this.flags['clear-client-secret']) patch.clientSecret = null;
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change: give the fields to change as flags or with --from-file');
    return (await this.call(sso.updateProvider, { params: { id: this.args.id }, body: patch })).data;
  }
}
