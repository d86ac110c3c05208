import { describe, expect, it } from 'vitest';
import { FlagValueError, valuesFromFlags } from '../../src/cli/schema-flags.js';

describe('list flags (CLI.md: body fields as kebab-case flags, objects as JSON)', () => {
  const fields = [{ field: 'steps', flag: 'steps', kind: 'array' as const, nullable: false, required: false }];

  it('a list of words: repeated or comma-separated', () => {
    expect(valuesFromFlags(fields, { steps: ['a, b', 'c'] })).toEqual({ steps: ['a', 'b', 'c'] });
  });

  it('02§2.6 a list of objects (escalation steps): a JSON array, or one JSON object per repeated flag', () => {
    const step = { delayMinutes: 5, channelIds: ['7f2c0a1e-0000-4000-8000-000000000001', '7f2c0a1e-0000-4000-8000-000000000002'] };
    expect(valuesFromFlags(fields, { steps: [JSON.stringify([step, step])] })).toEqual({ steps: [step, step] });
    expect(valuesFromFlags(fields, { steps: [JSON.stringify(step), JSON.stringify(step)] })).toEqual({ steps: [step, step] });
  });

  it('malformed JSON in a list flag is a flag error naming the flag (exit 2), not a request', () => {
    expect(() => valuesFromFlags(fields, { steps: ['[{"delayMinutes":'] })).toThrow(FlagValueError);
    expect(() => valuesFromFlags(fields, { steps: ['[{"delayMinutes":'] })).toThrow(/--steps/);
  });
});
