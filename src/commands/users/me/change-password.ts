import { Flags } from '../../../cli/flags.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { promptOrFail, UsageError } from '../../../cli/prompts.js';
import { readSecretLinesFromStdin } from '../../../cli/stdin.js';
import { auth } from '../../../client/endpoints.js';

export default class UsersMeChangePassword extends ApiCommand<typeof UsersMeChangePassword> {
  static override summary = "Change the signed-in user's password (every session of the account ends)";
  static override description = `The passwords never come from arguments: on a terminal they are prompted for; without one, --passwords-stdin reads two lines from standard input, the current password and then the new one. The server ends every session of the account; when the profile holds a password sign-in without MFA, the CLI signs in again with the new password, otherwise run \`svc login\`.`;
  static override examples = [
    '<%= config.bin %> users me change-password',
    'printf \'%s\\n%s\\n\' "$CURRENT" "$NEW" | <%= config.bin %> users me change-password --passwords-stdin',
  ];
  static override flags = {
    'passwords-stdin': Flags.boolean({ summary: 'Read two lines from standard input: the current password, then the new one.' }),
    ...mutationFlags,
  };

  async run() {
    const [currentPassword, newPassword] = this.flags['passwords-stdin'] ? await readSecretLinesFromStdin('--passwords-stdin', ['the current password', 'the new password']) : await this.prompt();
    if (currentPassword === undefined || newPassword === undefined) throw new UsageError('Both passwords are needed', '--passwords-stdin');
    const result = await this.call(auth.changePassword, { body: { currentPassword, newPassword } });

    const session = await this.session();
    const email = session.connection.profile?.email;
    if (!session.connection.persist || session.connection.profile?.authKind !== 'password' || email === undefined) {
      this.info('Password changed. Every session of the account has ended: sign in again.');
      return result;
    }
    // The server ended every session, the one in this profile included: sign in again when no second factor is
    // needed, so the profile keeps working; otherwise forget the dead tokens.
    const outcome = await this.call(auth.login, { body: { email, password: newPassword } }, { anonymous: true }).catch(() => undefined);
    if (outcome === undefined || outcome.mfaRequired) {
      await session.forgetSecrets();
      this.info(`Password changed. Every session has ended: run \`svc login --email ${email}\`.`);
    } else {
      await session.saveTokens(outcome.tokens);
      this.info(`Password changed. Every other session has ended; profile "${session.profileName}" is signed in again.`);
    }
    return result;
  }

  private async prompt(): Promise<[string, string]> {
    const terminal = this.terminal;
    const current = await promptOrFail({ kind: 'password', flag: '--passwords-stdin', message: 'Current password', terminal });
    const next = await promptOrFail({ kind: 'password', flag: '--passwords-stdin', message: 'New password', terminal });
    const again = await promptOrFail({ kind: 'password', flag: '--passwords-stdin', message: 'New password again', terminal });
    if (next !== again) throw new UsageError('The new passwords do not match');
    return [current, next];
  }
}
