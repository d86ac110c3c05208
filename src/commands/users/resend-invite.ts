import { Args } from '../../cli/flags.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { UsageError } from '../../cli/prompts.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { users } from '../../client/endpoints.js';

const body = bodyFlags(users.resendInvite, {
  omit: ['userId'],
  descriptions: { email: 'The invited user, by e-mail address (instead of ID).' },
});

export default class UsersResendInvite extends ApiCommand<typeof UsersResendInvite> {
  static override summary =
    'Send an invited user a new link; the previous one stops working (needs a session with MFA)';
  static override description = `Name the user by ID or by --email. As with \`svc users invite\`, the output carries the link in inviteUrl when the server sends no e-mail.`;
  static override examples = [
    '<%= config.bin %> users resend-invite 2c8d…',
    '<%= config.bin %> users resend-invite --email ada@example.com --output json',
  ];
  static override args = { id: Args.string({ description: 'User id (or give --email)' }) };
  static override flags = { ...body.flags, ...mutationFlags };
  static override columns = ['id', 'email', 'inviteEmailSent', 'inviteUrl'];

  async run() {
    const fields = await this.bodyFrom(body);
    if ((this.args.id === undefined) === (fields.email === undefined))
      throw new UsageError('Name the invited user by ID or by --email (one of them)', '--email');
    const result = await this.call(users.resendInvite, {
      body: this.args.id === undefined ? fields : { userId: this.args.id },
    });
    const sent = result;
    if (sent.inviteEmailSent === false && sent.inviteUrl)
      this.info(
        `No invitation e-mail was sent: pass the inviteUrl on to ${sent.email ?? 'the person invited'} (it works once).`,
      );
    return result;
  }
}
