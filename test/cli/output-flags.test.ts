import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(import.meta.dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { flags: Record<string, { helpGroup?: string }> }>;
};
const results = JSON.parse(fs.readFileSync(path.join(root, 'docs', 'command-results.json'), 'utf8')) as Record<string, string>;

/** The output flags that shape what a command prints (--no-color also governs stderr: every command keeps it). */
const DATA_FLAGS = new Set(['output', 'columns', 'no-headers', 'quiet']);

/** The output flags of the commands that print their output themselves (their run() returns nothing), each
 * honoured by that command's own printing. */
const OWN_OUTPUT: Record<string, string[]> = {
  // -o json or jsonl: each changed alert as a JSON object per line instead of a text line.
  'alerts:watch': ['output'],
  // --columns: the export's columns, in that order, as the server writes them (05 "03 §2.6/§4.4": columns=a,b).
  'audit:export': ['columns'],
};

describe('CLI.md "Output": a command offers only the output flags it honours', () => {
  it('a command that prints its own output (a stream, a file, a note on stderr) offers no -o, --columns, --no-headers or -q it would ignore', () => {
    const own = Object.entries(results).filter(([, type]) => type === 'undefined' || type === 'void');
    // The streams and notes of today: a new one joins this test by its result type alone.
    expect(own.map(([id]) => id)).toEqual(expect.arrayContaining(['alerts:watch', 'audit:export', 'logout', 'profiles:use', 'server:start']));
    const offered = Object.fromEntries(
      own.map(([id]) => [
        id,
        Object.entries(manifest.commands[id]?.flags ?? {})
          .map(([name]) => name)
          .filter((name) => DATA_FLAGS.has(name))
          .sort(),
      ]),
    );
    expect(offered).toEqual(Object.fromEntries(own.map(([id]) => [id, OWN_OUTPUT[id] ?? []])));
  });
});
