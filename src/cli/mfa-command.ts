import { Flags } from './flags.js';
import { ApiCommand } from './api-command.js';
import type { CommandClass } from './base-command.js';
import { promptOrFail } from './prompts.js';

export const codeFlag = {
  code: Flags.string({ summary: 'A current 6-digit code from the authenticator app (prompted for on a terminal).' }),
};

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
