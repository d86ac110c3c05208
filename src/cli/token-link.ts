import { rememberSecret } from './secrets-read.js';
import { promptOrFail, UsageError } from './prompts.js';
import { readStdin } from './stdin.js';
import { canPrompt, type TerminalInfo } from './terminal.js';

/** The pages the server's single-use links point to (src/server/delivery/links.ts). */
export type LinkPage = 'accept-invite' | 'reset-password';

export interface LinkSecrets {
  token: string;
  password: string;
}

const PAGES: Record<LinkPage, { noun: string; command: string }> = {
  'accept-invite': { noun: 'an invitation link', command: 'svc users accept-invite' },
  'reset-password': { noun: 'a password-reset link', command: 'svc login reset-password' },
};

/**
 * The token of a link (`https://…/accept-invite?token=…`), or the text itself when it is a bare token. Errors
 * never repeat the text: it is a secret.
 */
export function tokenFromLink(text: string, page: LinkPage, what: string): string {
  const value = text.trim();
  const query = value.indexOf('?');
  if (query === -1 && !/^https?:\/\//i.test(value)) return value;
  const token = new URLSearchParams(value.slice(query + 1)).get('token');
  if (!token) throw new UsageError(`The ${what} carries no token: give the whole link, or the token alone`);
  for (const [other, { noun, command }] of Object.entries(PAGES)) {
    if (other !== page && value.slice(0, query).endsWith(`/${other}`)) throw new UsageError(`That is ${noun}: use \`${command}\``);
  }
  return token;
}

/** Two lines from standard input: the link (or its token), then the new password. */
export function linkAndPasswordFromLines(text: string, page: LinkPage, what: string): LinkSecrets {
  const lines = text.split(/\r?\n/);
  // One trailing newline is what `printf '%s\n%s\n'` and `echo` leave.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const [link = '', password = '', ...extra] = lines;
  if (!link.trim()) throw new UsageError(`Missing the ${what} (the first line of standard input)`);
  if (!password) throw new UsageError('Missing the new password (the second line of standard input)');
  if (extra.length > 0) throw new UsageError(`Standard input has ${lines.length} lines; expected 2: the ${what}, then the new password`);
  return { token: rememberSecret(tokenFromLink(link, page, what)), password: rememberSecret(password) };
}

/**
 * The link and the new password, never from arguments: without a terminal on stdin, two lines read from it; on a
 * terminal, prompts (all hidden, the password asked twice). A terminal that cannot prompt (CI) is exit 2.
 */
export async function readLinkAndPassword(page: LinkPage, what: string, terminal: TerminalInfo): Promise<LinkSecrets> {
  if (!terminal.stdinIsTTY) return linkAndPasswordFromLines(await readStdin(), page, what);
  if (!canPrompt(terminal)) throw new UsageError(`Missing the ${what} and the new password: pipe them on standard input, one per line (no terminal to prompt on)`);
  const ask = (message: string) => promptOrFail({ kind: 'password', flag: `the ${what}`, message, terminal });
  const token = tokenFromLink(await ask(`The ${what} (or its token)`), page, what);
  if (!token) throw new UsageError(`Missing the ${what}`);
  const password = await ask('New password');
  if ((await ask('New password again')) !== password) throw new UsageError('The passwords do not match');
  return { token: rememberSecret(token), password };
}
