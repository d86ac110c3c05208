import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyMigrations, openDatabase, type Db } from '../../src/server/db/connection.js';
import { auditLogs } from '../../src/server/db/schema/index.js';
import { systemContext, type RequestContext } from '../../src/server/context.js';
import { checksumOf, recordAudit, verifyChain } from '../../src/server/modules/audit/recorder.js';

/** Details as audited writes hand them over: nested, numeric-looking keys, unicode, arrays, nulls, empty. */
const DETAILS: Record<string, unknown>[] = [
  {},
  { changes: ['name', 'timezone'] },
  { z: 1, a: { y: [3, { b: null, a: 'ü' }], x: true }, '10': 'ten', '2': 'two', '': 'empty', é: 'e-acute' },
  { text: 'quote " backslash \\ newline \n tab \t emoji 🙂 nul \u0000', n: -0.5, big: 1e21 },
  { undef: undefined, kept: 'yes', date: new Date('2026-01-02T03:04:05.000Z') },
];

/** modules/audit/recorder.ts: the checksum recordAudit writes is the one verification computes (checksumOf, the
 * stable JSON of every field), though recordAudit builds its text field by field and serializes details once. */
describe('audit recorder: one serialization of details, the same checksum (03 §2.6)', () => {
  let db: Db;
  beforeEach(() => {
    db = openDatabase(':memory:');
    applyMigrations(db);
  });
  afterEach(() => db.$client.close());

  const ctx = (over: Partial<RequestContext> = {}): RequestContext => ({ ...systemContext(), ...over });

  it('03§2.6 entries with every kind of details verify, link in seq order, and read back as given', () => {
    const entries = DETAILS.map((details, i) =>
      recordAudit(db, ctx({ ip: i % 2 ? '10.0.0.1' : 'not-an-ip', userAgent: i % 2 ? 'agent/1' : null }), {
        action: 'test.write',
        resourceType: 'site',
        resourceId: i % 2 ? crypto.randomUUID() : 'not-a-uuid',
        resourceName: i % 2 ? `Site ${i}` : null,
        details,
      }),
    );
    const report = verifyChain(db, 'platform');
    expect(report).toEqual({ chain: 'platform', entries: DETAILS.length, valid: true, firstBroken: null });
    for (const [i, entry] of entries.entries()) {
      expect(entry.seq).toBe(i + 1);
      const stored = db.select().from(auditLogs).where(eq(auditLogs.id, entry.id)).get();
      expect(stored).toBeDefined();
      const { checksum, ...rest } = stored ?? entry;
      expect(checksum).toBe(entry.checksum);
      expect(checksumOf(rest)).toBe(checksum);
      // What was given, as JSON would carry it (undefined dropped, a Date as its ISO text).
      expect(stored?.details).toEqual(JSON.parse(JSON.stringify(entry.details)));
    }
  });

  it('03§2.6 an edited row still fails verification', () => {
    for (const details of DETAILS) recordAudit(db, ctx(), { action: 'test.write', resourceType: 'site', details });
    db.$client.prepare("UPDATE audit_logs SET details = json_set(details, '$.kept', 'no') WHERE seq = 5").run();
    const report = verifyChain(db, 'platform');
    expect(report.valid).toBe(false);
    expect(report.firstBroken).toMatchObject({ seq: 5, reason: 'checksum does not match the entry' });
  });
});
