import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { users } from '../../client/endpoints.js';

export default class UsersResetPassword extends ApiCommand<typeof UsersResetPassword> {
  static override summary =
    'Issue a password-reset link for a user: e-mailed, or printed when the server sends no e-mail (needs a session with MFA)';
  static override description = `When the server sends no e-mail, the output carries the link in resetUrl: pass it on to the user; it works once, until expiresAt.`;
  static override examples = [
    '<%= config.bin %> users reset-password 2c8d…',
    "<%= config.bin %> users reset-password 2c8d… --output json | jq -r '.resetUrl // empty'",
  ];
  static override args = idArg('User');
  static override flags = { ...mutationFlags };
  static override columns = ['id', 'email', 'resetEmailSent', 'resetUrl', 'expiresAt'];

  async run() {
    const result = await this.call(users.resetPassword, { params: { id: this.args.id } });
    const link = result;
    if (link.resetEmailSent === false && link.resetUrl)
      this.info(`No reset e-mail was sent: pass the resetUrl on to ${link.email ?? 'the user'} (it works once).`);
    return result;
  }
}
