import { Flags } from '../../cli/flags.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { promptOrFail } from '../../cli/prompts.js';
import { account } from '../../client/endpoints.js';

export default class LoginForgotPassword extends ApiCommand<typeof LoginForgotPassword> {
  static override summary = 'Ask for a password-reset link by e-mail (no sign-in needed)';
  static override description = `The answer is the same whether or not the address has an account. When the server sends e-mail, a link valid for an hour arrives: use it in a browser or with \`svc login reset-password\`. A server without e-mail sends nothing; an administrator then issues a link with \`svc users reset-password\`.`;
  static override examples = ['<%= config.bin %> login forgot-password --base-url https://rmm.example.com --email ada@example.com'];
  static override flags = {
    email: Flags.string({ summary: 'Account e-mail (prompted for on a terminal).' }),
    ...mutationFlags,
  };
  static override columns = ['success', 'message'];

  async run() {
    const email = this.flags.email ?? (await promptOrFail({ kind: 'input', flag: '--email', message: 'Email', terminal: this.terminal }));
    return this.call(account.forgotPassword, { body: { email } }, { anonymous: true });
  }
}
