import { mutationFlags } from '../../cli/api-command.js';
import { MfaCommand, RECOVERY_CODES_NOTICE } from '../../cli/mfa-command.js';
import { auth } from '../../client/endpoints.js';

export default class MfaRecoveryCodes extends MfaCommand<typeof MfaRecoveryCodes> {
  static override summary = 'Replace every recovery code with a new set (shown once)';
  static override description = `Needs a session signed in with MFA. The old recovery codes stop working at once. Asks for confirmation on a terminal; scripts pass --yes. With --quiet the codes are printed one per line.`;
  static override examples = ['<%= config.bin %> mfa recovery-codes', '<%= config.bin %> mfa recovery-codes --yes --quiet > codes.txt'];
  static override flags = { ...mutationFlags };
  static override secretField = 'recoveryCodes';
  static override secretNotice = RECOVERY_CODES_NOTICE;

  async run() {
    await this.confirm('Replace every recovery code? The current ones stop working at once.');
    return this.call(auth.mfaRecoveryCodes, {});
  }
}
