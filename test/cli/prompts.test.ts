import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageError, confirmOrRefuse, promptOrFail } from '../../src/cli/prompts.js';
import type { TerminalInfo } from '../../src/cli/terminal.js';

const prompts = vi.hoisted(() => ({
  input: vi.fn(),
  password: vi.fn(),
  confirm: vi.fn(),
}));
vi.mock('@inquirer/prompts', () => prompts);

afterEach(() => {
  vi.clearAllMocks();
});

const noTerminal: TerminalInfo = { stdinIsTTY: false, stdoutIsTTY: false, stderrIsTTY: false, ci: true, color: false };
const terminal: TerminalInfo = { stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true, ci: false, color: true };

async function usageError(promise: Promise<unknown>): Promise<UsageError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof UsageError)) throw new Error(`expected a UsageError, got ${String(error)}`);
  return error;
}

describe('promptOrFail', () => {
  it('CLI.md login: with no terminal, fails with exit 2 naming the flag instead of hanging', async () => {
    for (const [flag, kind] of [
      ['--email', 'input'],
      ['--password-stdin', 'password'],
      ['--yes', 'confirm'],
    ] as const) {
      const error = await usageError(promptOrFail({ flag, message: 'Value', kind, terminal: noTerminal }));
      expect(error.message).toBe(`Missing ${flag} (no terminal to prompt on)`);
      expect(error.flag).toBe(flag);
      expect(error.exitCode).toBe(2);
    }
    expect(prompts.input).not.toHaveBeenCalled();
    expect(prompts.password).not.toHaveBeenCalled();
  });

  it('refuses in CI even on a terminal', async () => {
    await usageError(
      promptOrFail({ flag: '--email', message: 'Email', kind: 'input', terminal: { ...terminal, ci: true } }),
    );
  });

  it('prompts on stderr when there is a terminal', async () => {
    prompts.input.mockResolvedValue('a@b.c');
    prompts.password.mockResolvedValue('hunter2');
    expect(await promptOrFail({ flag: '--email', message: 'Email', kind: 'input', terminal })).toBe('a@b.c');
    expect(await promptOrFail({ flag: '--password-stdin', message: 'Password', kind: 'password', terminal })).toBe(
      'hunter2',
    );
    expect(prompts.input.mock.calls[0]?.[0]).toMatchObject({ message: 'Email' });
    expect(prompts.input.mock.calls[0]?.[1]).toEqual({ output: process.stderr });
    expect(prompts.password.mock.calls[0]?.[1]).toEqual({ output: process.stderr });
  });
});

describe('confirmOrRefuse', () => {
  it('CLI.md safety: --yes skips the question', async () => {
    expect(await confirmOrRefuse('Delete partner p1?', { yes: true, terminal: noTerminal })).toBe(true);
    expect(prompts.confirm).not.toHaveBeenCalled();
  });

  it('CLI.md safety: without a terminal and without --yes, refuses with exit 2', async () => {
    const error = await usageError(confirmOrRefuse('Delete partner p1?', { terminal: noTerminal }));
    expect(error.message).toBe('Refusing without --yes: Delete partner p1?');
    expect(error.exitCode).toBe(2);
    expect(prompts.confirm).not.toHaveBeenCalled();
  });

  it('asks on a terminal, default no; a refusal is exit 2', async () => {
    prompts.confirm.mockResolvedValueOnce(true).mockResolvedValueOnce(false);
    expect(await confirmOrRefuse('Revoke key k1?', { terminal })).toBe(true);
    expect(prompts.confirm.mock.calls[0]).toEqual([
      { message: 'Revoke key k1?', default: false },
      { output: process.stderr },
    ]);
    const error = await usageError(confirmOrRefuse('Revoke key k1?', { terminal }));
    expect(error.exitCode).toBe(2);
  });
});
