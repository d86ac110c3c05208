import { describe, expect, it } from 'vitest';
import { describeProblems, parseDecisions } from '../../src/cli/decisions.js';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const items = new Set([A, B]);

describe('the decisions file of `svc access-reviews decide --from-file`', () => {
  it('reads itemId, decision and notes (optional, quoted, any case of header), skipping blank lines', () => {
    const csv = `\uFEFFItemId,Decision,Notes\r\n${A},approved,\r\n\r\n${B},revoked,"gone, ""for good""\nreally"\r\n`;
    expect(parseDecisions({ csv }, items)).toEqual({
      rows: [
        { where: 'line 2', itemId: A, decision: 'approved' },
        { where: 'line 4', itemId: B, decision: 'revoked', notes: 'gone, "for good"\nreally' },
      ],
      problems: [],
    });
    expect(parseDecisions({ csv: `decision,itemId\npending,${A}\n` }, items).rows).toEqual([
      { where: 'line 2', itemId: A, decision: 'pending' },
    ]);
  });

  it('collects every problem of the file, each with its line, and returns no rows then', () => {
    const csv = [
      'itemId,decision,notes',
      `${A},maybe,`,
      `${A},approved,`,
      'nope,approved,',
      `${B},approved`,
      `,revoked,x`,
      `${B},approved,${'x'.repeat(2001)}`,
    ].join('\n');
    const { rows, problems } = parseDecisions({ csv }, items);
    expect(rows).toEqual([]);
    expect(problems.map((p) => p.where)).toEqual(['line 5', 'line 2', 'line 3', 'line 4', 'line 6', 'line 7']);
    expect(problems[0]?.message).toBe('expected 3 fields (itemId,decision,notes), got 2');
    expect(problems[1]?.message).toBe('decision must be one of pending, approved, revoked, got "maybe"');
    expect(problems[2]?.message).toBe(`item ${A} appears again (first on line 2)`);
    expect(problems[3]?.message).toBe('item nope is not in this review');
    expect(problems[4]?.message).toBe('itemId is empty');
    expect(problems[5]?.message).toMatch(/^notes: /);
    expect(describeProblems('d.csv', problems)).toMatch(/^d\.csv: 6 problems, nothing was sent:\n {2}line 5: /);
  });

  it('refuses unknown, repeated and missing columns, an empty file and a file with no rows', () => {
    expect(
      parseDecisions({ csv: `itemId,decison,itemId\n${A},approved,x\n` }, items).problems.map((p) => p.message),
    ).toEqual([
      'unknown column "decison" (the columns are itemId, decision, notes)',
      'column "itemId" appears twice',
      'missing column "decision"',
    ]);
    expect(parseDecisions({ csv: '' }, items).problems[0]?.message).toMatch(/^empty/);
    expect(parseDecisions({ csv: 'itemId,decision\n' }, items).problems[0]?.message).toBe('no decisions in the file');
    expect(parseDecisions({ csv: `itemId,decision\n"${A},approved\n` }, items).problems[0]?.message).toMatch(
      /^not valid CSV/,
    );
  });

  it('also reads a JSON/YAML list (or {decisions: [...]}), by entry number', () => {
    expect(parseDecisions({ data: [{ itemId: A, decision: 'approved', notes: 'ok' }] }, items).rows).toEqual([
      { where: 'entry 1', itemId: A, decision: 'approved', notes: 'ok' },
    ]);
    expect(parseDecisions({ data: { decisions: [{ itemId: B, decision: 'revoked' }] } }, items).rows).toHaveLength(1);
    expect(parseDecisions({ data: [{ itemId: A, decision: 'approved', why: 'x' }, 'nope'] }, items).problems).toEqual([
      { where: 'entry 1', message: 'unknown field "why" (the fields are itemId, decision, notes)' },
      { where: 'entry 2', message: 'expected an object {itemId, decision, notes}' },
    ]);
    expect(parseDecisions({ data: 'text' }, items).problems[0]?.where).toBe('file');
  });
});
