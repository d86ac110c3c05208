import { mutationFlags } from '../../cli/api-command.js';
import { codeFlag, MfaCommand, passwordFlag } from '../../cli/mfa-command.js';
import { auth } from '../../client/endpoints.js';

export default class MfaEnable extends MfaCommand<typeof MfaEnable> {
  static override summary = 'Turn MFA on with a code from the authenticator app; the profile keeps a fresh MFA session';
  static override description = `The server answers with a new session that carries MFA, and the CLI stores it in the profile (with the refresh cookies of a hosted deployment), so actions that need MFA work without signing in again. The tokens are printed only when credentials come from SVC_TOKEN (nothing is stored then).`;
  static override examples = [
    '<%= config.bin %> mfa enable --code 123456',
    'printf %s "$PASSWORD" | <%= config.bin %> mfa enable --code 123456 --password-stdin',
  ];
  static override flags = { ...codeFlag, ...passwordFlag, ...mutationFlags };
  static override columns = ['success', 'user.email', 'user.mfaEnabled', 'sessionStored'];

  async run() {
    const code = await this.code();
    const result = await this.withPassword((currentPassword) =>
      this.call(auth.mfaEnable, { body: { code, ...(currentPassword === undefined ? {} : { currentPassword }) } }),
    );
    const enabled = result;
    const session = await this.session();
    if (session.connection.credentials.kind !== 'stored') {
      this.warn('Credentials come from the environment: the new session is printed, not stored. It will not be shown again.');
      return enabled;
    }
    await session.saveTokens(enabled.tokens);
    this.info(`MFA is on for ${enabled.user.email}; profile "${session.profileName}" now holds a session with MFA.`);
    return { success: enabled.success, user: enabled.user, sessionStored: true };
  }
}
