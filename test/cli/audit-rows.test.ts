import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { csvCell } from '../../src/lib/csv-cell.js';
import { auditRowMatcher, rowFilter, rowParser, rowWriter, type AuditRowFilter, type RowCounts } from '../../src/cli/export/audit-rows.js';
import type { ExportFormat } from '../../src/cli/export/records.js';

/** The stages of `svc audit export` (src/commands/audit/export.ts) over an answer in `sent`, written as `asked`. */
async function stages(answer: string, sent: ExportFormat, asked: ExportFormat, filter: AuditRowFilter = {}): Promise<{ written: string; counts: RowCounts }> {
  let written = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      written += chunk.toString('utf8');
      callback();
    },
  });
  const counts: RowCounts = { received: 0, kept: 0 };
  await pipeline(Readable.from([Buffer.from(answer)]), await rowParser(sent), rowFilter(auditRowMatcher(filter), counts, () => {}), rowWriter(asked), sink);
  return { written, counts };
}

const HEADER = 'id,timestamp,actorId,actorEmail,actorName,action,details';
const row = (id: string, timestamp: string, action: string, email = 'a@a.test', name = 'Ann Admin', actorId = 'u-1') =>
  `${id},${timestamp},${actorId},${email},${name},${action},"{""k"":1}"`;

describe('svc audit export row stages (CLI.md "Audit export"; 03 §4.4, 05 "03 §2.6/§4.4")', () => {
  it('CLI.md audit export: an answer with no row (or none the filters keep) still writes its CSV header', async () => {
    expect(await stages(`${HEADER}\n`, 'csv', 'csv')).toEqual({ written: `${HEADER}\n`, counts: { received: 0, kept: 0 } });
    const none = await stages(`${HEADER}\n${row('1', '2026-01-01T00:00:00Z', 'user.login')}\n`, 'csv', 'csv', { action: 'no.such.action' });
    expect(none).toEqual({ written: `${HEADER}\n`, counts: { received: 1, kept: 0 } });
    // With rows, the header once, then the rows; JSON lines carry no header.
    const some = await stages(`${HEADER}\n${row('1', '2026-01-01T00:00:00Z', 'user.login')}\n`, 'csv', 'csv');
    expect(some.written.split('\n')).toEqual([HEADER, expect.stringMatching(/^1,/), '']);
    expect((await stages(`${HEADER}\n`, 'csv', 'jsonl')).written).toBe('');
  });

  it('03§4.4 (wire) `to` is inclusive on the CLI side too: a row stamped at `to` is kept', async () => {
    const answer = [HEADER, row('1', '2026-01-01T00:00:00Z', 'a.b'), row('2', '2026-01-02T00:00:00Z', 'a.b'), row('3', '2026-01-02T00:00:00.001Z', 'a.b')].join('\n');
    const { written } = await stages(answer, 'csv', 'jsonl', { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' });
    expect(written.trimEnd().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['1', '2']);
  });

  it('03§4.4 (wire) excludeActions, userId (exact) and user (e-mail, name or id) are checked on every row', () => {
    const r = { action: 'user.login', actorId: 'u-1', actorEmail: 'a@a.test', actorName: 'Ann Admin' };
    expect(auditRowMatcher({ excludeActions: 'site.create,user.login' })(r)).toBe(false);
    expect(auditRowMatcher({ excludeActions: ['site.create'] })(r)).toBe(true);
    expect(auditRowMatcher({ excludeActions: 'user' })(r)).toBe(true);
    expect(auditRowMatcher({ userId: 'u-1' })(r)).toBe(true);
    expect(auditRowMatcher({ userId: 'u-' })(r)).toBe(false);
    expect(auditRowMatcher({ user: 'ann' })(r)).toBe(true);
    expect(auditRowMatcher({ user: 'A@A' })(r)).toBe(true);
    expect(auditRowMatcher({ user: 'u-1' })(r)).toBe(true);
    expect(auditRowMatcher({ user: 'bob' })(r)).toBe(false);
  });

  it('03§4.4 (wire) a cell starting with a line feed gets the apostrophe, in the CLI\'s CSV as in the server\'s', async () => {
    expect(csvCell('\n=cmd|calc')).toBe("'\n=cmd|calc");
    const { written } = await stages(`${HEADER}\n1,2026-01-01T00:00:00Z,u-1,a@a.test,"\n=cmd",x.y,\n`, 'csv', 'csv');
    expect(written.split('\n')[1]).toBe('1,2026-01-01T00:00:00Z,u-1,a@a.test,"\'');
  });
});
