import { ApiCommand, createFlags } from '../../../cli/api-command.js';
import { Flags } from '../../../cli/flags.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { readSecretFromStdin } from '../../../cli/stdin.js';
import { sso } from '../../../client/endpoints.js';

const body = bodyFlags(sso.createProvider, { omit: ['clientSecret'] });

export default class SsoProvidersCreate extends ApiCommand<typeof SsoProvidersCreate> {
  static override summary = 'Create an SSO provider (inactive until `svc sso providers status ID active`; needs a session with MFA)';
  static override description = `An --issuer is discovered: its endpoints are filled in (a failed discovery only leaves a warning in the server log). A --preset (see \`svc sso presets\`) pre-fills scopes and the attribute mapping. A SAML provider needs --sso-url, --idp-entity-id and --idp-certificate (its signing certificate, PEM); give the identity provider this server's metadata, /api/v1/sso/saml/metadata. The client secret is read from standard input with --client-secret-stdin, never from arguments.`;
  static override examples = [
    'printf %s "$SECRET" | <%= config.bin %> sso providers create --org-id 3b9e… --name Corp --type oidc --issuer https://login.example.com --client-id svc --client-secret-stdin --default-role-id 00000000-0000-4000-8000-000000000006',
    '<%= config.bin %> sso providers create --org-id 3b9e… --name Okta --type oidc --preset okta --issuer https://corp.okta.com --client-id svc --no-auto-provision',
    '<%= config.bin %> sso providers create --org-id 3b9e… --name Entra --type saml --preset azure-ad-saml --sso-url https://login.microsoftonline.com/TENANT/saml2 --idp-entity-id https://sts.windows.net/TENANT/ --idp-certificate="$(cat idp.pem)" --default-role-id 00000000-0000-4000-8000-000000000006',
  ];
  static override flags = {
    ...body.flags,
    'client-secret-stdin': Flags.boolean({ summary: 'Read the OAuth client secret from standard input.' }),
    ...createFlags,
  };
  static override columns = ['id', 'name', 'type', 'status', 'issuer', 'authorizationUrl', 'hasClientSecret'];

  async run() {
    const request = await this.bodyFrom(body);
    const clientSecret = this.flags['client-secret-stdin'] ? await readSecretFromStdin('--client-secret-stdin') : undefined;
    return (await this.call(sso.createProvider, { body: { ...request, ...(clientSecret !== undefined ? { clientSecret } : {}) } })).data;
  }
}
