import { ExitCode } from './exit-codes.js';
import { rememberSecret } from './secrets-read.js';
import { canPrompt, detectTerminal } from './terminal.js';
import type { TerminalInfo } from './terminal.js';

/** A usage or input error found before any request: exit 2 (CLI.md "Errors and exit codes"). */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly code = 'USAGE_ERROR';
  readonly exitCode = ExitCode.USAGE;

  constructor(
    message: string,
    /** The flag that would have supplied the value, e.g. `--email`. */
    readonly flag?: string,
  ) {
    super(message);
  }
}

interface PromptBase {
  /** The flag that supplies this value without a terminal, named in the error. */
  flag: string;
  message: string;
  terminal?: TerminalInfo;
}

export type PromptOptions =
  | (PromptBase & { kind: 'input'; default?: string; validate?: (value: string) => boolean | string })
  | (PromptBase & { kind: 'password'; validate?: (value: string) => boolean | string })
  | (PromptBase & { kind: 'confirm'; default?: boolean });

// Prompts go to stderr: stdout carries data only.
const context = () => ({ output: process.stderr });

function ensureTerminal(terminal: TerminalInfo | undefined, flag: string): void {
  if (!canPrompt(terminal ?? detectTerminal())) {
    throw new UsageError(`Missing ${flag} (no terminal to prompt on)`, flag);
  }
}

/** Asks on the terminal, or fails with exit 2 naming the flag when there is none to ask on — never hangs. */
export async function promptOrFail(options: PromptOptions & { kind: 'confirm' }): Promise<boolean>;
export async function promptOrFail(options: PromptOptions & { kind: 'input' | 'password' }): Promise<string>;
export async function promptOrFail(options: PromptOptions): Promise<string | boolean>;
export async function promptOrFail(options: PromptOptions): Promise<string | boolean> {
  ensureTerminal(options.terminal, options.flag);
  const inquirer = await import('@inquirer/prompts');
  switch (options.kind) {
    case 'input':
      return inquirer.input(
        { message: options.message, default: options.default, validate: options.validate },
        context(),
      );
    case 'password':
      return rememberSecret(await inquirer.password({ message: options.message, mask: true, validate: options.validate }, context()));
    case 'confirm':
      return inquirer.confirm({ message: options.message, default: options.default }, context());
  }
}

/**
 * The gate before destructive verbs (CLI.md "Safety"): `--yes` passes, a terminal asks, and without either it
 * refuses with exit 2.
 */
export async function confirmOrRefuse(
  message: string,
  options: { yes?: boolean; terminal?: TerminalInfo },
): Promise<true> {
  if (options.yes === true) return true;
  const terminal = options.terminal ?? detectTerminal();
  if (!canPrompt(terminal)) throw new UsageError(`Refusing without --yes: ${message}`, '--yes');
  const { confirm } = await import('@inquirer/prompts');
  if (!(await confirm({ message, default: false }, context())))
    throw new UsageError(`Not confirmed: ${message}`, '--yes');
  return true;
}
