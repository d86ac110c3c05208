import { describe, expect, it } from 'vitest';
import { UuidSchema } from '../../src/contract/common.js';
import { newId } from '../../src/server/db/ids.js';
import { createTestApp } from '../helpers/server.js';
import { systemContext } from '../../src/server/context.js';

describe('row ids (db/ids.ts)', () => {
  it('01§1 every id is a UUID the contract accepts: version 7, its first 48 bits the time it was made', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(UuidSchema.safeParse(id).success).toBe(true);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });

  it('ids made one after another sort in that order (inserts append to the primary-key index), and never repeat', () => {
    const ids = Array.from({ length: 10_000 }, () => newId());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('01§1 rows created through a service get these ids (the column default and the audit entry)', async () => {
    const t = await createTestApp();
    try {
      const partner = t.services.tenancy.createPartner(systemContext(), { name: 'P', slug: 'p-ids' });
      expect(partner.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
      const audit = t.db.$client.prepare("SELECT id FROM audit_logs WHERE resource_id = ?").pluck().get(partner.id) as string;
      expect(audit).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    } finally {
      await t.close();
    }
  });
});
