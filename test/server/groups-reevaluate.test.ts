import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/server/context.js';
import { deviceGroupMembers, deviceGroupMembershipLog, devices } from '../../src/server/db/schema/index.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { seedWorld, type World } from '../helpers/seed.js';

// Membership log ids are made by the server's SQL function: time-ordered UUIDs (db/ids.ts).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const OS = ['windows', 'linux', 'macos'] as const;
const TAGS = ['prod', 'web', 'db', 'lab'];
const TREE = {
  operator: 'AND' as const,
  conditions: [
    { field: 'osType', operator: 'in', value: ['windows', 'linux'] },
    { operator: 'OR', conditions: [{ field: 'tags', operator: 'hasAny', value: ['prod', 'db'] }, { field: 'hostname', operator: 'startsWith', value: 'keep-' }] },
  ],
};

/** The i-th entry (lists here are never empty). */
function pick<T>(list: readonly T[], i: number): T {
  const v = list[i % list.length];
  if (v === undefined) throw new Error('empty list');
  return v;
}

/** A small deterministic generator: the same rounds on every run. */
function prng(seed: number) {
  let x = seed;
  return (n: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
}

/**
 * The one-pass re-evaluation (a materialized match, a temp-table difference, set-based INSERT, DELETE and log)
 * must store exactly what the conditions select plus the pins, and log exactly the difference: checked against
 * the filter preview of the same tree (the same compiler, read path) over rounds of random device changes.
 */
describe('dynamic group re-evaluation in one pass (05 wire notes "4.7")', () => {
  let t: TestApp;
  let w: World;
  const ids: string[] = [];

  beforeEach(async () => {
    t = await createTestApp();
    w = await seedWorld(t, { mfa: true });
    ids.length = 0;
    for (let i = 0; i < 40; i++) {
      const key = t.services.enrollmentKeys.create(systemContext(), { orgId: w.orgA1.id, siteId: w.siteA1a.id, name: `k${i}`, maxUsage: 1 });
      const enrolled = t.services.devices.enroll(systemContext(), { enrollmentKey: key.key, hostname: `dev-${i}`, osType: pick(OS, i % 3), osVersion: '1', architecture: 'x64', agentVersion: '1.0.0' });
      ids.push(enrolled.deviceId);
      t.db.update(devices).set({ tags: [pick(TAGS, i % 4)] }).where(eq(devices.id, enrolled.deviceId)).run();
    }
  });
  afterEach(async () => t.close());

  const members = (groupId: string) =>
    new Map(t.db.select().from(deviceGroupMembers).where(eq(deviceGroupMembers.groupId, groupId)).all().map((m) => [m.deviceId, m]));
  const matching = () => new Set(t.services.filters.preview(systemContext(), TREE, { orgId: w.orgA1.id, idsOnly: true }).data.deviceIds);
  const logOf = (groupId: string) => t.db.select().from(deviceGroupMembershipLog).where(eq(deviceGroupMembershipLog.groupId, groupId)).all();

  it('05-4.7 membership equals the matching devices plus pins, and the log holds exactly each round\'s difference', () => {
    const ctx = systemContext();
    const group = t.services.groups.create(ctx, { orgId: w.orgA1.id, name: 'dyn', filterConditions: TREE }).data;
    expect(new Set(members(group.id).keys())).toEqual(matching());
    expect(logOf(group.id).every((l) => l.action === 'added' && l.reason === 'Matched filter conditions (Group created)')).toBe(true);
    const rand = prng(13);
    const pinned = new Set<string>();
    for (let round = 0; round < 12; round++) {
      // Change some devices: OS, tags, hostname, decommissioned; pin or unpin a few.
      for (let k = 0; k < 8; k++) {
        const id = pick(ids, rand(ids.length));
        const what = rand(4);
        if (what === 0) t.db.update(devices).set({ osType: pick(OS, rand(3)) }).where(eq(devices.id, id)).run();
        if (what === 1) t.db.update(devices).set({ tags: [pick(TAGS, rand(4)), pick(TAGS, rand(4))] }).where(eq(devices.id, id)).run();
        if (what === 2) t.db.update(devices).set({ hostname: rand(2) ? `keep-${round}-${k}` : `dev-${round}-${k}` }).where(eq(devices.id, id)).run();
        if (what === 3) t.db.update(devices).set({ status: rand(3) === 0 ? 'decommissioned' : 'online' }).where(eq(devices.id, id)).run();
      }
      const pin = pick(ids, rand(ids.length));
      if (pinned.has(pin)) {
        t.services.groups.unpin(ctx, group.id, pin);
        pinned.delete(pin);
      } else {
        t.services.groups.pin(ctx, group.id, pin);
        pinned.add(pin);
      }
      const before = members(group.id);
      const logBefore = new Set(logOf(group.id).map((l) => l.id));
      const at = new Date(Date.now() + round * 1000);
      const result = t.services.groups.reevaluateOrg(w.orgA1.id, at);

      const after = members(group.id);
      const expected = matching();
      for (const id of pinned) expected.add(id);
      expect(new Set(after.keys())).toEqual(expected);
      for (const id of pinned) expect(after.get(id)?.isPinned).toBe(true);

      const added = [...after.keys()].filter((id) => !before.has(id)).sort();
      const removed = [...before.keys()].filter((id) => !after.has(id)).sort();
      expect(result).toEqual({ added: added.length, removed: removed.length });
      for (const id of added) expect(after.get(id)).toMatchObject({ isPinned: false, addedAt: at.toISOString(), addedBy: null });
      const fresh = logOf(group.id).filter((l) => !logBefore.has(l.id));
      expect(fresh.filter((l) => l.action === 'added').map((l) => l.deviceId).sort()).toEqual(added);
      expect(fresh.filter((l) => l.action === 'removed').map((l) => l.deviceId).sort()).toEqual(removed);
      for (const l of fresh) {
        expect(l.id).toMatch(UUID);
        expect(l.createdAt).toBe(at.toISOString());
        expect(l.reason).toBe(l.action === 'added' ? 'Matched filter conditions (Device changed)' : 'No longer matches filter conditions (Device changed)');
      }
    }
    // The log ids are unique across every round.
    const all = logOf(group.id);
    expect(new Set(all.map((l) => l.id)).size).toBe(all.length);
  });

  it('05-4.7 two dynamic groups of one organization are re-evaluated independently (the difference table is per run)', () => {
    const ctx = systemContext();
    const a = t.services.groups.create(ctx, { orgId: w.orgA1.id, name: 'a', filterConditions: TREE }).data;
    const b = t.services.groups.create(ctx, { orgId: w.orgA1.id, name: 'b', filterConditions: { operator: 'AND' as const, conditions: [{ field: 'osType', operator: 'equals', value: 'macos' }] } }).data;
    t.db.update(devices).set({ osType: 'macos' }).where(eq(devices.id, pick(ids, 0))).run();
    t.db.update(devices).set({ osType: 'windows', tags: ['prod'] }).where(eq(devices.id, pick(ids, 2))).run();
    t.services.groups.reevaluateOrg(w.orgA1.id);
    expect(new Set(members(a.id).keys())).toEqual(matching());
    const macs = t.db.select({ id: devices.id }).from(devices).where(eq(devices.osType, 'macos')).all().map((r) => r.id);
    expect(new Set(members(b.id).keys())).toEqual(new Set(macs));
    expect(logOf(b.id).filter((l) => l.action === 'removed').map((l) => l.deviceId)).toEqual([ids[2]]);
    expect(logOf(a.id).filter((l) => l.action === 'removed').map((l) => l.deviceId)).toEqual([ids[0]]);
  });
});
