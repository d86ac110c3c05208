import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { progressShown, startProgress, withProgress } from '../../src/cli/progress.js';

/** A stand-in for stderr that keeps what is written; a terminal or not, with the cursor calls ora makes. */
function stream(isTTY: boolean) {
  let text = '';
  const out = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        text += chunk.toString('utf8');
        callback();
      },
    }),
    {
      isTTY,
      columns: 80,
      cursorTo: () => true,
      moveCursor: () => true,
      clearLine: () => true,
    },
  );
  return { out, text: () => text };
}

// eslint-disable-next-line no-control-regex
const COLOUR = /\u001b\[3\dm/;

// ora colours through chalk, which decides once, on load, from the process: say colour works, so that only
// the `color` option decides (ora is loaded on the first spinner shown, after this).
const savedForceColor = process.env.FORCE_COLOR;
process.env.FORCE_COLOR = '1';
afterAll(() => {
  if (savedForceColor === undefined) delete process.env.FORCE_COLOR;
  else process.env.FORCE_COLOR = savedForceColor;
});

describe('progress (CLI.md "Output": spinners only on a terminal, never under CI, NO_COLOR honoured)', () => {
  it('is shown only on a terminal, and never with CI set', () => {
    expect(progressShown({ isTTY: true }, {})).toBe(true);
    expect(progressShown({ isTTY: false }, {})).toBe(false);
    expect(progressShown({}, {})).toBe(false);
    expect(progressShown({ isTTY: true }, { CI: '1' })).toBe(false);
    expect(progressShown({ isTTY: true }, { CI: 'true' })).toBe(false);
    expect(progressShown({ isTTY: true }, { CI: 'false' })).toBe(true);
  });

  it('writes nothing at all to a stream that is not a terminal, or under CI', async () => {
    for (const [isTTY, env] of [
      [false, {}],
      [true, { CI: '1' }],
    ] as const) {
      const s = stream(isTTY);
      const result = await withProgress('Working…', { color: true, stream: s.out, env }, async (progress) => {
        progress.update('1 of 2');
        progress.update('2 of 2');
        return 42;
      });
      expect(result).toBe(42);
      expect(s.text()).toBe('');
    }
  });

  it('draws on a terminal, in colour only when colour is on, and clears or keeps its line when it stops', async () => {
    const coloured = stream(true);
    const spinner = await startProgress('Working…', { color: true, stream: coloured.out, env: {} });
    spinner.update('12 rows');
    spinner.stop({ keep: true });
    expect(coloured.text()).toContain('12 rows');
    expect(coloured.text()).toMatch(COLOUR);

    const plain = stream(true);
    const quiet = await startProgress('Working…', { color: false, stream: plain.out, env: {} });
    quiet.update('12 rows');
    quiet.stop();
    expect(plain.text()).toContain('Working…');
    expect(plain.text()).not.toMatch(COLOUR);
  });

  it('stops the spinner when the work fails', async () => {
    const s = stream(true);
    await expect(
      withProgress('Working…', { color: false, stream: s.out, env: {} }, () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    const written = s.text().length;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(s.text().length).toBe(written);
  });
});
