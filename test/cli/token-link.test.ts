import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/prompts.js';
import { linkAndPasswordFromLines, readLinkAndPassword, tokenFromLink } from '../../src/cli/token-link.js';

const TOKEN = 'q5Gm3fV_0-abcDEF';

function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error('no UsageError');
}

describe('the link of svc users accept-invite and svc login reset-password', () => {
  it('takes the whole link or the token alone', () => {
    expect(tokenFromLink(`https://rmm.example.com/accept-invite?token=${TOKEN}`, 'accept-invite', 'invitation link')).toBe(TOKEN);
    expect(tokenFromLink(`  http://127.0.0.1:3000/reset-password?x=1&token=${TOKEN}\t`, 'reset-password', 'reset link')).toBe(TOKEN);
    expect(tokenFromLink(TOKEN, 'accept-invite', 'invitation link')).toBe(TOKEN);
  });

  it('a link without a token, or for the other page, is a usage error that does not repeat the link', () => {
    const noToken = usageMessage(() => tokenFromLink('https://rmm.example.com/accept-invite?tok=secret-ish', 'accept-invite', 'invitation link'));
    expect(noToken).toBe('The invitation link carries no token: give the whole link, or the token alone');
    const other = usageMessage(() => tokenFromLink(`https://rmm.example.com/reset-password?token=${TOKEN}`, 'accept-invite', 'invitation link'));
    expect(other).toBe('That is a password-reset link: use `svc login reset-password`');
    expect(other).not.toContain(TOKEN);
  });

  it('reads two lines, the link then the password; a missing line is named', () => {
    expect(linkAndPasswordFromLines(`https://h/accept-invite?token=${TOKEN}\nPass word 1\n`, 'accept-invite', 'invitation link')).toEqual({ token: TOKEN, password: 'Pass word 1' });
    expect(linkAndPasswordFromLines(`${TOKEN}\r\nPw-1\r\n`, 'reset-password', 'reset link')).toEqual({ token: TOKEN, password: 'Pw-1' });
    expect(usageMessage(() => linkAndPasswordFromLines('', 'accept-invite', 'invitation link'))).toBe('Missing the invitation link (the first line of standard input)');
    expect(usageMessage(() => linkAndPasswordFromLines(`${TOKEN}\n`, 'accept-invite', 'invitation link'))).toBe('Missing the new password (the second line of standard input)');
    expect(usageMessage(() => linkAndPasswordFromLines(`${TOKEN}\npw\nmore\n`, 'reset-password', 'reset link'))).toBe('Standard input has 3 lines; expected 2: the reset link, then the new password');
  });

  it('CLI.md: a terminal that cannot prompt (CI) is exit 2, never a hang', async () => {
    const ci = { stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true, ci: true, color: false };
    const error = await readLinkAndPassword('accept-invite', 'invitation link', ci).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as UsageError).message).toContain('pipe them on standard input');
  });
});
