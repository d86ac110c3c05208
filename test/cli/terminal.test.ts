import { describe, expect, it } from 'vitest';
import { ExitCode, exitCodeForStatus, hintFor } from '../../src/cli/exit-codes.js';
import { canPrompt, detectTerminal, warnOnce } from '../../src/cli/terminal.js';

const tty = { isTTY: true };
const pipe = { isTTY: false };
const interactive = { stdin: tty, stdout: tty, stderr: tty };

describe('detectTerminal (CLI.md scripting conveniences)', () => {
  it('an interactive shell colours and prompts', () => {
    const t = detectTerminal({}, interactive);
    expect(t).toEqual({ stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true, ci: false, color: true });
    expect(canPrompt(t)).toBe(true);
  });

  it.each([['true'], ['1'], ['yes']])('CI=%s means CI mode: no colour, no prompts', (ci) => {
    const t = detectTerminal({ CI: ci }, interactive);
    expect(t.ci).toBe(true);
    expect(t.color).toBe(false);
    expect(canPrompt(t)).toBe(false);
  });

  it.each([[''], ['false'], ['0']])('CI=%j does not', (ci) => {
    expect(detectTerminal({ CI: ci }, interactive).ci).toBe(false);
  });

  it('stdin or stdout not a terminal means CI mode', () => {
    expect(detectTerminal({}, { ...interactive, stdout: pipe }).ci).toBe(true);
    expect(detectTerminal({}, { ...interactive, stdin: pipe }).ci).toBe(true);
    expect(detectTerminal({}, { stdin: {}, stdout: {}, stderr: {} })).toMatchObject({ ci: true, color: false });
  });

  it('stderr redirected: no prompts', () => {
    const t = detectTerminal({}, { ...interactive, stderr: pipe });
    expect(canPrompt(t)).toBe(false);
  });

  it('NO_COLOR with any value, even empty, disables colour', () => {
    expect(detectTerminal({ NO_COLOR: '' }, interactive).color).toBe(false);
    expect(detectTerminal({ NO_COLOR: '1' }, interactive).color).toBe(false);
  });
});

describe('warnOnce', () => {
  it('writes a line once per key', () => {
    const lines: string[] = [];
    const sink = { write: (s: string) => lines.push(s) };
    warnOnce('test-key-a', 'first', sink);
    warnOnce('test-key-a', 'again', sink);
    warnOnce('test-key-b', 'other\n', sink);
    expect(lines).toEqual(['first\n', 'other\n']);
  });
});

describe('exit codes (CLI.md errors and exit codes)', () => {
  it.each([
    [200, undefined, ExitCode.SUCCESS],
    [204, undefined, ExitCode.SUCCESS],
    [207, undefined, ExitCode.INCOMPLETE],
    [400, 'VALIDATION_ERROR', ExitCode.USAGE],
    [400, 'REVIEW_COMPLETED', ExitCode.CONFLICT],
    [400, undefined, ExitCode.CONFLICT],
    [401, 'UNAUTHORIZED', ExitCode.AUTH],
    [403, 'MFA_REQUIRED', ExitCode.FORBIDDEN],
    [404, 'NOT_FOUND', ExitCode.NOT_FOUND],
    [409, 'CONFLICT', ExitCode.CONFLICT],
    [413, undefined, ExitCode.USAGE],
    [422, 'UNPROCESSABLE', ExitCode.CONFLICT],
    [429, 'RATE_LIMITED', ExitCode.RATE_LIMITED],
    [500, undefined, ExitCode.SERVER],
    [503, undefined, ExitCode.SERVER],
  ])('HTTP %i %s → %i', (status, code, exit) => {
    expect(exitCodeForStatus(status, code)).toBe(exit);
  });

  it('the table matches CLI.md', () => {
    expect(ExitCode).toEqual({
      SUCCESS: 0,
      UNEXPECTED: 1,
      USAGE: 2,
      AUTH: 3,
      FORBIDDEN: 4,
      NOT_FOUND: 5,
      CONFLICT: 6,
      RATE_LIMITED: 7,
      SERVER: 8,
      INCOMPLETE: 9,
      INTERRUPTED: 130,
    });
  });

  it('hints', () => {
    expect(hintFor(401, 'UNAUTHORIZED')).toBe('Try this: svc login');
    expect(hintFor(403, 'MFA_REQUIRED')).toBe('Try this: enable MFA with `svc mfa setup`, then `svc mfa enable --code CODE` (the profile keeps the new session)');
    expect(hintFor(403, 'PARTNER_INACTIVE')).toBe('the partner account is not active');
    expect(hintFor(403, 'FORBIDDEN')).toBeUndefined();
    expect(hintFor(500)).toBeUndefined();
  });

  it('issue 9 item 14: the 401 hint points where the credentials come from', () => {
    expect(hintFor(401, 'UNAUTHORIZED', { profile: 'staging' })).toBe('Try this: svc login --profile staging');
    expect(hintFor(401, 'UNAUTHORIZED', { credentialsFrom: 'SVC_TOKEN' })).toContain('SVC_TOKEN');
    expect(hintFor(401, 'UNAUTHORIZED', { credentialsFrom: 'SVC_API_KEY' })).not.toContain('svc login');
    // issue 15 item 6 with a key from the environment: the variable is named, and the route may not take keys.
    const fromEnv = hintFor(401, 'INVALID_API_KEY_FORMAT', { credentialsFrom: 'SVC_API_KEY', apiKey: true });
    expect(fromEnv).toContain('SVC_API_KEY');
    expect(fromEnv).toContain('may not accept API keys on this route');
    expect(fromEnv).not.toContain('svc login');
    expect(hintFor(401, 'INVALID_CREDENTIALS', { signingIn: true })).toBeUndefined();
  });
});
