import { Flags } from '../../../cli/flags.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { CommandError } from '../../../cli/base-command.js';
import { ExitCode } from '../../../cli/exit-codes.js';
import { DECISION_COLUMNS, describeRequest, reauthFactor } from '../../../cli/pam-command.js';
import { promptOrFail } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { readSecretFromStdin } from '../../../cli/stdin.js';
import { canPrompt } from '../../../cli/terminal.js';
import { PAM_DURATION, pam } from '../../../client/endpoints.js';

const def = pam.respond;
const body = bodyFlags(def, {
  omit: ['decision', 'proof', 'reauthPassword'],
  descriptions: {
    durationMinutes: `How long the elevation lasts, ${PAM_DURATION.min}-${PAM_DURATION.max} minutes (default ${PAM_DURATION.default}).`,
    reason: 'Why (up to 2000 characters; kept in the audit trail).',
    reauthMfaCode: 'A TOTP code, for a critical-tier approval by an account without a password.',
  },
});

const PASSWORD_FLAG = '--reauth-password-stdin';

export default class PamRequestsApprove extends ApiCommand<typeof PamRequestsApprove> {
  static override summary = 'Approve a pending elevation request (needs a session with MFA and pam:approve)';
  static override description = `Grants the rights asked for, for --duration-minutes (default ${PAM_DURATION.default}); the device applies it (enforcementStatus pending_dispatch, then active). A UAC request without a file hash cannot be approved: the server denies it (status denied, enforcementStatus refused) and says why.

An elevation approval asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).

Critical-tier approvals (AI tool actions of risk tier 4) need your password again: pipe it with ${PASSWORD_FLAG} (never on the command line), or let the CLI ask on a terminal. Accounts without a password give --reauth-mfa-code instead. Without the factor and without a terminal the approval fails with exit 3.`;
  static override examples = [
    '<%= config.bin %> pam requests approve 2a7c…',
    '<%= config.bin %> pam requests approve 2a7c… --yes --duration-minutes 60 --reason "Ticket 4711"',
    'printf %s "$PASSWORD" | <%= config.bin %> pam requests approve 2a7c… --yes --reauth-password-stdin',
  ];
  static override args = idArg('Elevation request');
  static override flags = {
    ...body.flags,
    'reauth-password-stdin': Flags.boolean({
      summary: 'Read your password from stdin for a critical-tier approval (prompts when stdin is a terminal).',
    }),
    ...mutationFlags,
  };
  static override columns = DECISION_COLUMNS;

  async run() {
    const { id } = this.args;
    const fields = await this.bodyFrom(body);
    const minutes = typeof fields.durationMinutes === 'number' ? fields.durationMinutes : PAM_DURATION.default;
    let what: string | undefined;
    if (!this.flags.yes && !this.flags['dry-run'] && canPrompt(this.terminal)) {
      // What is being approved, for the prompt; the prompt still stands when the request cannot be read.
      what = await this.call(pam.getRequest, { params: { id } }).then(
        (answer) => describeRequest(answer.request),
        () => undefined,
      );
    }
    await this.confirm(
      `Approve elevation request ${id}${what ? ` (${what})` : ''} for ${minutes} minute${minutes === 1 ? '' : 's'}?`,
    );

    const password = this.flags['reauth-password-stdin'] ? await this.readPassword() : undefined;
    const respond = (factor: { reauthPassword?: string; reauthMfaCode?: string }) =>
      this.call(def, { params: { id }, body: { decision: 'approve' as const, ...fields, ...factor } });
    try {
      return await respond(password === undefined ? {} : { reauthPassword: password });
    } catch (err) {
      const factor = reauthFactor(err);
      if (factor === undefined) throw err;
      const message = `${(err as Error).message} (reauth_required, HTTP 401)`;
      if (!canPrompt(this.terminal)) {
        const hint =
          factor === 'password'
            ? `Try this: pipe your password with ${PASSWORD_FLAG}, e.g. svc pam requests approve ${id} --yes ${PASSWORD_FLAG} < password-file`
            : `Try this: give a current code with --reauth-mfa-code CODE`;
        throw new CommandError(message, ExitCode.AUTH, 'reauth_required', hint);
      }
      this.info(`${message}: this is a critical-tier approval.`);
      // One more try with the factor asked for on the terminal.
      if (factor === 'password')
        return respond({
          reauthPassword: await promptOrFail({
            kind: 'password',
            flag: PASSWORD_FLAG,
            message: 'Your password:',
            terminal: this.terminal,
          }),
        });
      return respond({
        reauthMfaCode: await promptOrFail({
          kind: 'input',
          flag: '--reauth-mfa-code',
          message: 'Code from your authenticator app:',
          terminal: this.terminal,
        }),
      });
    }
  }

  /** The password of --reauth-password-stdin: piped, or asked for when stdin is a terminal. */
  private async readPassword(): Promise<string> {
    if (process.stdin.isTTY)
      return promptOrFail({
        kind: 'password',
        flag: PASSWORD_FLAG,
        message: 'Your password:',
        terminal: this.terminal,
      });
    return readSecretFromStdin(PASSWORD_FLAG);
  }
}
