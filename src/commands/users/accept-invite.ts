import { Flags } from '../../cli/flags.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { readLinkAndPassword } from '../../cli/token-link.js';
import { account } from '../../client/endpoints.js';

export default class UsersAcceptInvite extends ApiCommand<typeof UsersAcceptInvite> {
  static override summary = 'Accept an invitation: choose the password and activate the account (no sign-in needed)';
  static override description = `The invitation link (or just its token) and the new password never come from arguments: on a terminal they are prompted for (hidden, the password twice); without one, standard input gives two lines, the link and then the password. Nothing is saved: sign in afterwards with \`svc login\`. The link works once; \`svc users resend-invite\` issues a new one.`;
  static override examples = [
    '<%= config.bin %> users accept-invite --base-url https://rmm.example.com',
    'printf \'%s\\n%s\\n\' "$INVITE_URL" "$PASSWORD" | <%= config.bin %> users accept-invite --base-url https://rmm.example.com',
  ];
  static override flags = {
    name: Flags.string({ summary: 'Your name, if it should differ from the one in the invitation.' }),
    ...mutationFlags,
  };
  static override columns = ['id', 'email', 'name', 'mfaEnabled'];

  async run() {
    const { token, password } = await readLinkAndPassword('accept-invite', 'invitation link', this.terminal);
    const name = this.flags.name;
    const body = { token, password, ...(name === undefined ? {} : { name }) };
    // The server also opens a session; it is not kept (sign-in is `svc login`'s work), so no token is printed.
    const { user } = await this.call(account.acceptInvite, { body }, { anonymous: true });
    this.info(`Invitation accepted: ${user.email} is active. Sign in with \`svc login --email ${user.email}\`.`);
    return user;
  }
}
