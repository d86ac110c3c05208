import { Flags } from './flags.js';
import { ApiCommand } from './api-command.js';
import type { CommandClass } from './base-command.js';
import { ApiError } from '../client/errors.js';
import { promptOrFail } from './prompts.js';
import { readSecretFromStdin } from './stdin.js';

export const codeFlag = {
  code: Flags.string({ summary: 'A current 6-digit code from the authenticator app (prompted for on a terminal).' }),
};

/** Hosted deployments ask for the password to set up or enable MFA (issue 15 item 2); the bundled server verifies
 * it when given. */
export const passwordFlag = {
  'password-stdin': Flags.boolean({
    summary: "Read the account's password from standard input (sent as currentPassword; prompted for on a terminal when the server asks).",
  }),
};

/** A 400 that names `currentPassword`: the deployment wants the password with this request. */
export function asksForPassword(err: unknown): boolean {
  return err instanceof ApiError && err.status === 400 && JSON.stringify(err.body ?? err.message).includes('currentPassword');
}

export const RECOVERY_CODES_NOTICE = 'The recovery codes are shown once and cannot be retrieved again: store them somewhere safe now.';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The MFA family: the authenticator code from a flag or a prompt, and tables that show secrets in full. */
export abstract class MfaCommand<T extends CommandClass> extends ApiCommand<T> {
  protected async code(): Promise<string> {
    const given = (this.flags as Record<string, unknown>).code;
    if (typeof given === 'string') return given;
    return promptOrFail({ kind: 'password', flag: '--code', message: 'Code from the authenticator app', terminal: this.terminal });
  }

  /**
   * Sends an MFA change with the password of --password-stdin; without it, sends none, and when the deployment
   * answers 400 naming `currentPassword`, asks for it on a terminal and sends again (without a terminal: exit 2
   * naming --password-stdin).
   */
  protected async withPassword<R>(send: (currentPassword: string | undefined) => Promise<R>): Promise<R> {
    if ((this.flags as Record<string, unknown>)['password-stdin'] === true) return send(await readSecretFromStdin('--password-stdin'));
    try {
      return await send(undefined);
    } catch (err) {
      if (!asksForPassword(err)) throw err;
      const password = await promptOrFail({ kind: 'password', flag: '--password-stdin', message: 'The deployment asks for your password', terminal: this.terminal });
      return send(password);
    }
  }

  /** A table shortens nested values; recovery codes are shown once, so a table lists them in full instead, and
   * leaves out the QR code's data URL (the terminal gets the QR itself). Other formats print the API's object. */
  protected override print(result: unknown): void {
    if (this.format !== 'table' || this.flags.quiet || !isRecord(result)) {
      super.print(result);
      return;
    }
    const shaped: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(result)) {
      if (key === 'qrCodeDataUrl') continue;
      shaped[key] = Array.isArray(value) ? value.join('  ') : value;
    }
    super.print(shaped);
  }
}
