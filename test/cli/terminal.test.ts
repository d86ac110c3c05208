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
  // Expected codes are CLI.md's numbers, not the names of the table under test.
  it.each([
    [200, undefined, 0],
    [204, undefined, 0],
    [207, undefined, 9],
    [400, 'VALIDATION_ERROR', 2],
    [400, 'REVIEW_COMPLETED', 6],
    [400, undefined, 6],
    [401, 'UNAUTHORIZED', 3],
    [403, 'MFA_REQUIRED', 4],
    [404, 'NOT_FOUND', 5],
    [409, 'CONFLICT', 6],
    [413, undefined, 2],
    [422, 'UNPROCESSABLE', 6],
    [429, 'RATE_LIMITED', 7],
    [500, undefined, 8],
    [503, undefined, 8],
  ])('HTTP %i %s → %i', (status, code, exit) => {
    expect(exitCodeForStatus(status, code)).toBe(exit);
  });

  // The codes of CLI.md "Errors and exit codes" (the table above checks what each HTTP answer maps to).
  it('the table matches CLI.md', () => {
    expect(Object.values(ExitCode).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 130]);
    expect({ unexpected: ExitCode.UNEXPECTED, interrupted: ExitCode.INTERRUPTED }).toEqual({ unexpected: 1, interrupted: 130 });
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
