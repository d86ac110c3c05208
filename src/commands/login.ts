import { Flags } from '../cli/flags.js';
import { ApiCommand } from '../cli/api-command.js';
import type { HintContext } from '../cli/exit-codes.js';
import { promptOrFail, UsageError } from '../cli/prompts.js';
import { readSecretFromStdin } from '../cli/stdin.js';
import { auth, sso, tenancy } from '../client/endpoints.js';

export default class Login extends ApiCommand<typeof Login> {
  static override summary = 'Sign in to a deployment and save the credentials in a profile';
  static override description = `Interactive on a terminal; fully scriptable without one. Secrets go to the OS keychain, or to a file readable only by you when no keychain answers. Secrets are read from standard input, never from arguments.`;
  static override examples = [
    '<%= config.bin %> login --base-url http://127.0.0.1:3000',
    'printf %s "$PASSWORD" | <%= config.bin %> login --email admin@example.com --password-stdin',
    'printf %s "$PASSWORD" | <%= config.bin %> login --email admin@example.com --password-stdin --otp 123456',
    'printf %s "$SVC_KEY" | <%= config.bin %> login --api-key-stdin --profile ci',
  ];

  static override flags = {
    email: Flags.string({ summary: 'Account e-mail.' }),
    'password-stdin': Flags.boolean({ summary: 'Read the password from standard input.' }),
    otp: Flags.string({ summary: 'A current code from the authenticator app (or a recovery code), when MFA is on.' }),
    'api-key-stdin': Flags.boolean({ summary: 'Sign in with an API key read from standard input.', exclusive: ['email', 'password-stdin', 'otp'] }),
    sso: Flags.boolean({ summary: "Sign in through the organization's identity provider in a browser (needs a terminal).", exclusive: ['email', 'password-stdin', 'otp', 'api-key-stdin'], dependsOn: ['org-id'] }),
    'org-id': Flags.string({ summary: 'Organization whose identity provider --sso signs in with.', dependsOn: ['sso'] }),
    storage: Flags.string({ summary: 'Where to keep the secrets.', options: ['keychain', 'file'] }),
  };

  static override columns = ['profile', 'baseUrl', 'email', 'authKind', 'storage'];

  async run() {
    const flags = this.flags;
    const session = await this.session();
    // CLI.md: with SVC_API_KEY or SVC_TOKEN set, nothing is read from or written to disk; a sign-in would save.
    if (!session.connection.persist) {
      const from = process.env.SVC_API_KEY ? 'SVC_API_KEY' : 'SVC_TOKEN';
      throw new UsageError(`${from} is set, and while it is nothing is saved: commands use it. Unset SVC_API_KEY and SVC_TOKEN to sign in and save a profile.`);
    }
    const baseUrl = session.connection.baseUrl;
    const profileName = session.profileName;
    const storage = flags.storage as 'keychain' | 'file' | undefined;
    const { CliSession } = await import('../cli/session.js');
    const saving = await CliSession.open({ profile: profileName, baseUrl, storage, env: {} });
    // The store is opened once the sign-in succeeded: a refused one stores nothing and says nothing of where.

    if (flags['api-key-stdin']) {
      const apiKey = await readSecretFromStdin('--api-key-stdin');
      await this.call(tenancy.listAccessibleOrganizations, { headers: { 'x-api-key': apiKey } }, { anonymous: true });
      const store = await saving.secrets();
      await saving.forgetSecrets();
      await store.set(`${profileName}:apiKey`, apiKey);
      await saving.profiles.upsert(profileName, { baseUrl, authKind: 'apiKey', storage: store.kind });
      await this.selectIfNone(saving, profileName);
      this.info(`Saved the API key for ${baseUrl} in profile "${profileName}" (${store.kind}).`);
      return { profile: profileName, baseUrl, email: null, authKind: 'apiKey', storage: store.kind };
    }

    if (flags.sso) {
      const { receiveSsoCode } = await import('../cli/sso-login.js');
      const received = await receiveSsoCode({ baseUrl, orgId: flags['org-id'] ?? '', terminal: this.terminal, announce: (m) => this.info(m) });
      const signedIn = await this.call(sso.exchange, { body: received }, { anonymous: true });
      const store = await saving.secrets();
      await saving.forgetSecrets();
      await saving.saveTokens(signedIn);
      await saving.profiles.upsert(profileName, { baseUrl, email: signedIn.user.email, authKind: 'sso', storage: store.kind, userId: signedIn.user.id });
      await this.selectIfNone(saving, profileName);
      this.info(`Logged in to ${baseUrl} as ${signedIn.user.email} through SSO (profile "${profileName}").`);
      return { profile: profileName, baseUrl, email: signedIn.user.email, authKind: 'sso', storage: store.kind };
    }

    const email = flags.email ?? (await promptOrFail({ kind: 'input', flag: '--email', message: 'Email', terminal: this.terminal }));
    const password = flags['password-stdin']
      ? await readSecretFromStdin('--password-stdin')
      : await promptOrFail({ kind: 'password', flag: '--password-stdin', message: 'Password', terminal: this.terminal });
    const outcome = await this.call(auth.login, { body: { email, password } }, { anonymous: true });
    let tokens;
    let user;
    if (outcome.mfaRequired) {
      const code = flags.otp ?? (await promptOrFail({ kind: 'input', flag: '--otp', message: 'Authentication code', terminal: this.terminal }));
      const verified = await this.call(auth.mfaVerify, { body: { code, tempToken: outcome.tempToken } }, { anonymous: true });
      tokens = verified.tokens;
      user = verified.user;
    } else {
      tokens = outcome.tokens;
      user = outcome.user;
    }
    const store = await saving.secrets();
    await saving.forgetSecrets();
    await saving.saveTokens(tokens, session.capturedCookies);
    await saving.profiles.upsert(profileName, { baseUrl, email: user.email, authKind: 'password', storage: store.kind, userId: user.id });
    await this.selectIfNone(saving, profileName);
    this.info(`Logged in to ${baseUrl} as ${user.email} (profile "${profileName}", credentials in ${store.kind === 'file' ? store.location : 'the OS keychain'}).`);
    if (!user.mfaEnabled) this.info('MFA is not enabled on this account: some actions need it. Enable it with `svc mfa setup`.');
    return { profile: profileName, baseUrl, email: user.email, authKind: 'password', storage: store.kind };
  }

  /** A refused sign-in is not helped by "run svc login". */
  protected override hintContext(): HintContext {
    return { ...super.hintContext(), signingIn: true };
  }

  private async selectIfNone(session: { profiles: { current(): Promise<string | undefined>; use(name: string): Promise<void> } }, name: string) {
    if (!(await session.profiles.current())) await session.profiles.use(name);
  }
}
