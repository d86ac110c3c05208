import { mutationFlags } from '../../cli/api-command.js';
import { MfaCommand, passwordFlag, RECOVERY_CODES_NOTICE } from '../../cli/mfa-command.js';
import { auth } from '../../client/endpoints.js';

export default class MfaSetup extends MfaCommand<typeof MfaSetup> {
  static override summary = 'Start TOTP setup: a new secret, its otpauth URL and recovery codes';
  static override description = `Prints the secret, the otpauth:// URL and the recovery codes (shown once: store them). On a colour terminal the QR code is drawn on stderr for the authenticator app to scan. Then confirm with \`svc mfa enable --code CODE\`. A deployment that asks for the account's password here gets it from --password-stdin, or from a prompt on a terminal. With --quiet only the secret is printed and the recovery codes of this setup are never shown: after enabling, \`svc mfa recovery-codes\` replaces them with a new set.`;
  static override examples = [
    '<%= config.bin %> mfa setup',
    '<%= config.bin %> mfa setup --output json > mfa-setup.json',
    'SECRET=$(<%= config.bin %> mfa setup --quiet)',
    'printf %s "$PASSWORD" | <%= config.bin %> mfa setup --password-stdin --output json',
  ];
  static override flags = { ...passwordFlag, ...mutationFlags };
  static override columns = ['secret', 'otpAuthUrl', 'recoveryCodes'];
  static override quietField = 'secret';

  async run() {
    const result = await this.withPassword((currentPassword) =>
      this.call(auth.mfaSetup, { body: currentPassword === undefined ? {} : { currentPassword } }),
    );
    const setup = result;
    // The server returns this setup's recovery codes once, here, and never again; `mfa recovery-codes` replaces
    // them with a new set.
    if (this.flags.quiet) {
      this.info('Only the secret was printed (--quiet): this setup\'s recovery codes were not shown and cannot be retrieved; after `svc mfa enable`, replace them with a new set with `svc mfa recovery-codes`.');
    } else {
      this.warn(RECOVERY_CODES_NOTICE);
      if (this.terminal.stderrIsTTY && this.terminal.color) {
        // The QR is drawn with colour escapes; without colour (NO_COLOR, --no-color, CI) the otpauth URL serves.
        const { toString } = await import('qrcode');
        process.stderr.write(await toString(setup.otpAuthUrl, { type: 'terminal', small: true }));
      }
    }
    this.info('Add the secret to your authenticator app, then run `svc mfa enable --code CODE`.');
    return result;
  }
}
