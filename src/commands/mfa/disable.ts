import { mutationFlags } from '../../cli/api-command.js';
import { codeFlag, MfaCommand } from '../../cli/mfa-command.js';
import { auth } from '../../client/endpoints.js';

export default class MfaDisable extends MfaCommand<typeof MfaDisable> {
  static override summary = 'Turn MFA off (refused when the partner or organization requires it)';
  static override description = `Needs a current authenticator code (or a recovery code). Asks for confirmation on a terminal; scripts pass --yes.`;
  static override examples = ['<%= config.bin %> mfa disable --code 123456', '<%= config.bin %> mfa disable --code 123456 --yes'];
  static override flags = { ...codeFlag, ...mutationFlags };

  async run() {
    await this.confirm('Turn MFA off for this account? Actions that need MFA will be refused.');
    const code = await this.code();
    return this.call(auth.mfaDisable, { body: { code } });
  }
}
