import { ApiCommand, unkeyedCreateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { users } from '../../client/endpoints.js';

const body = bodyFlags(users.invite);

export default class UsersInvite extends ApiCommand<typeof UsersInvite> {
  static override summary =
    'Invite a user: the server e-mails a single-use link, or returns it when it sends no e-mail (needs a session with MFA)';
  static override description = `Partner users get a partner role (and --org-access, --org-ids); organization users (--org-id) an organization role (and optionally --site-ids, --device-group-ids). System administrators name the partner with --partner-id.

When the server sends no invitation e-mail (no mail service configured, or it failed), the output carries the acceptance link in inviteUrl: pass it on to the person invited; it works once. \`svc users resend-invite\` issues a new one.`;
  static override examples = [
    '<%= config.bin %> users invite --email ada@example.com --name "Ada Lovelace" --role-id 5e1b…',
    '<%= config.bin %> users invite --email tech@example.com --name Tech --role-id 5e1b… --org-access selected --org-ids 3b9e…,8c21…',
    "<%= config.bin %> users invite --email ops@example.com --name Ops --role-id 7a40… --org-id 3b9e… --output json | jq -r '.inviteUrl // empty'",
  ];
  // Not idempotent on the server (a replay record would keep the link): a repeated invitation answers 409.
  static override flags = { ...body.flags, ...unkeyedCreateFlags };
  static override columns = ['id', 'email', 'name', 'status', 'roleId', 'inviteEmailSent', 'inviteUrl'];

  async run() {
    const result = await this.call(users.invite, { body: await this.bodyFrom(body) });
    const invited = result;
    if (invited.inviteEmailSent === false && invited.inviteUrl) {
      this.info(
        `No invitation e-mail was sent: pass the inviteUrl on to ${invited.email ?? 'the person invited'} (it works once).`,
      );
    }
    return result;
  }
}
