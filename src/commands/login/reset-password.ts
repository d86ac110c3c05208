import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { readLinkAndPassword } from '../../cli/token-link.js';
import { account } from '../../client/endpoints.js';

export default class LoginResetPassword extends ApiCommand<typeof LoginResetPassword> {
  static override summary = 'Set a new password with a password-reset link (no sign-in needed); every session of the account ends';
  static override description = `The reset link (or just its token) and the new password never come from arguments: on a terminal they are prompted for (hidden, the password twice); without one, standard input gives two lines, the link and then the password. The link works once, for an hour; ask for one with \`svc login forgot-password\`, or an administrator issues one with \`svc users reset-password\`. Then sign in with \`svc login\`.`;
  static override examples = [
    '<%= config.bin %> login reset-password --base-url https://rmm.example.com',
    'printf \'%s\\n%s\\n\' "$RESET_URL" "$PASSWORD" | <%= config.bin %> login reset-password --base-url https://rmm.example.com',
  ];
  static override flags = { ...mutationFlags };
  static override columns = ['success', 'message'];

  async run() {
    const body = await readLinkAndPassword('reset-password', 'reset link', this.terminal);
    return this.call(account.resetPassword, { body }, { anonymous: true });
  }
}
