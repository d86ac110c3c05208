import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLogs, elevationRequests, pamRules } from '../../src/server/db/schema/index.js';
import { AI, API, H1, NO_RULE_CRITERIA, T1, UAC, createRule, ingest, usePamWorld, type PamWorld } from '../helpers/pam.js';
import { ROLES, seedUser } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('PAM rules, signer groups and defaults (01 §2.12, §4.9; 04 wire notes "PAM")', () => {
  let t: TestApp;
  let w: PamWorld;
  let sys: string;
  const rules = (token: string, method: 'POST' | 'GET', body?: unknown, suffix = '') =>
    t.call(method, `${API}/pam/rules${suffix}`, { token, ...(body !== undefined ? { body } : {}) });
  const create = (body: Record<string, unknown>, token = sys) =>
    rules(token, 'POST', { orgId: w.orgA1.id, name: 'rule', ...body });
  const patch = (id: string, body: Record<string, unknown>, token = sys) =>
    t.call('PATCH', `${API}/pam/rules/${id}`, { token, body });

  usePamWorld((app, world) => ([t, w, sys] = [app, world, world.tokens.system]));

  // ---- create, defaults, read, update, delete ----

  it('01§4.9 create answers 201 {success, rule} with every default; get, list, PATCH and DELETE answer their shapes', async () => {
    const res = await create({ name: 'Vendor installer', matchHash: H1.toUpperCase() });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, rule: expect.any(Object) });
    const rule = res.body.rule;
    expect(rule).toEqual({
      id: expect.any(String),
      orgId: w.orgA1.id,
      siteId: null,
      name: 'Vendor installer',
      verdict: 'require_approval',
      suspendedVerdict: null,
      priority: 100,
      enabled: true,
      ...NO_RULE_CRITERIA,
      matchHash: H1,
      approvalDurationMinutes: null,
      reapprovedAt: null,
      reapprovedByUserId: null,
      createdBy: w.users.system.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const got = await t.call('GET', `${API}/pam/rules/${rule.id}`, { token: sys });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ success: true, rule });

    const updated = await patch(rule.id, {
      verdict: 'auto_deny',
      priority: 5,
      timeWindow: { start: '09:00', end: '17:00', days: [1, 2], timezone: 'Europe/Paris' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.success).toBe(true);
    expect(updated.body.rule).toMatchObject({
      verdict: 'auto_deny',
      priority: 5,
      matchHash: H1,
      timeWindow: { start: '09:00', end: '17:00', days: [1, 2], timezone: 'Europe/Paris' },
    });

    const del = await t.call('DELETE', `${API}/pam/rules/${rule.id}`, { token: sys });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true });
    expect((await t.call('GET', `${API}/pam/rules/${rule.id}`, { token: sys })).status).toBe(404);
    const actions = t.db
      .select({ a: auditLogs.action })
      .from(auditLogs)
      .where(eq(auditLogs.resourceId, rule.id))
      .all()
      .map((r) => r.a);
    expect(actions).toEqual(['pam.rule.create', 'pam.rule.update', 'pam.rule.delete']);
  });

  it('04 PAM list is {success, rules} ordered by priority, then createdAt', async () => {
    const a = await createRule(t, sys, { orgId: w.orgA1.id, name: 'a', matchHash: H1, priority: 20 });
    const b = await createRule(t, sys, { orgId: w.orgA1.id, name: 'b', matchHash: H1, priority: 10 });
    const c = await createRule(t, sys, { orgId: w.orgA1.id, name: 'c', matchHash: H1, priority: 20 });
    t.db.update(pamRules).set({ createdAt: '2020-01-01T00:00:00.000Z' }).where(eq(pamRules.id, c.id)).run();
    await createRule(t, sys, { orgId: w.orgA2.id, name: 'other org', matchHash: H1 });
    const res = await t.call('GET', `${API}/pam/rules?orgId=${w.orgA1.id}`, { token: sys });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.rules.map((r: { id: string }) => r.id)).toEqual([b.id, c.id, a.id]);
    const orgOnly = await t.call('GET', `${API}/pam/rules`, { token: w.tokens.orgUser });
    expect(orgOnly.body.rules).toHaveLength(3);
    const all = await t.call('GET', `${API}/pam/rules`, { token: w.tokens.aAdmin });
    expect(all.body.rules).toHaveLength(4);
    expect((await t.call('GET', `${API}/pam/rules`, { token: w.tokens.bAdmin })).body.rules).toEqual([]);
    expect((await t.call('GET', `${API}/pam/rules/${a.id}`, { token: w.tokens.bAdmin })).status).toBe(404);
  });

  it('01§4.9 bounds of every field: name, verdict, priority, ids, hashes, risk tier, negate keys, duration, unknown keys', async () => {
    const bad: Record<string, unknown>[] = [
      { name: '' },
      { name: 'x'.repeat(256) },
      { verdict: 'allow' },
      { priority: -1 },
      { priority: 100_001 },
      { priority: 1.5 },
      { enabled: 'yes' },
      { siteId: 'not-a-uuid' },
      { matchHash: 'abc' },
      { matchHash: 'g'.repeat(64) },
      { matchSignerThumbprint: T1.slice(0, 40) },
      { matchRiskTier: 5 },
      { matchRiskTier: -1 },
      { matchSigner: '' },
      { matchSigner: 'x'.repeat(256) },
      { matchPathGlob: 'x'.repeat(1025) },
      { matchCommandLine: 'x'.repeat(2001) },
      { matchNegate: ['thumbprint'] },
      { matchNegate: ['hash', 'hash'] },
      { approvalDurationMinutes: 0 },
      { approvalDurationMinutes: 1441 },
      { matchHashes: H1 },
      { suspendedVerdict: 'auto_approve' },
    ];
    for (const body of bad) {
      const res = await create({ matchHash: H1, ...body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    const missingName = await rules(sys, 'POST', { orgId: w.orgA1.id, matchHash: H1 });
    expect(missingName.status).toBe(400);
    expect(missingName.body.error).toContain('name');
    const ok = await create({
      name: 'x'.repeat(255),
      priority: 0,
      approvalDurationMinutes: 1440,
      matchHash: H1,
      matchNegate: ['hash'],
    });
    expect(ok.status).toBe(201);
  });

  it('01§4.9 at least one identifying criterion: none, or a time window alone, is 400', async () => {
    const none = await create({});
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('PAM_RULE_NO_CRITERIA');
    const windowOnly = await create({ timeWindow: { start: '09:00', end: '17:00' } });
    expect(windowOnly.status).toBe(400);
    expect(windowOnly.body.code).toBe('PAM_RULE_NO_CRITERIA');
    // User and directory group are identifying on their own (documented choice).
    expect((await create({ matchUser: 'CORP\\alice' })).status).toBe(201);
    expect((await create({ matchAdGroup: 'HelpDesk', timeWindow: { start: '09:00', end: '17:00' } })).status).toBe(201);
  });

  it('01§4.9 executable and tool-action criteria cannot be mixed; user and group combine with either', async () => {
    for (const body of [
      { matchPathGlob: '**', matchToolName: 'execute_command' },
      { matchHash: H1, matchRiskTier: 2 },
      { matchCommandLine: 'x', matchToolName: 'execute_command', matchRiskTier: 2 },
      { matchSignerThumbprint: T1, matchRiskTier: 2 },
    ]) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('PAM_RULE_MIXED_CRITERIA');
    }
    expect((await create({ matchPathGlob: '**', matchUser: 'bob', matchAdGroup: 'Staff' })).status).toBe(201);
    expect((await create({ matchToolName: 'execute_command', matchUser: 'bob' })).status).toBe(201);
  });

  it('01§4.9 matchSigner is exclusive with matchSignerGroupId; a thumbprint combines with a signer but not a group', async () => {
    const group = await t.call('POST', `${API}/pam/signer-groups`, {
      token: sys,
      body: { orgId: w.orgA1.id, name: 'Trusted', signers: ['Vendor Inc'] },
    });
    expect(group.status).toBe(201);
    const gid = group.body.signerGroup.id;
    const both = await create({ matchSigner: 'Vendor Inc', matchSignerGroupId: gid });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('PAM_RULE_SIGNER_CONFLICT');
    const thumbAndGroup = await create({ matchSignerThumbprint: T1, matchSignerGroupId: gid });
    expect(thumbAndGroup.status).toBe(400);
    expect(thumbAndGroup.body.code).toBe('PAM_RULE_SIGNER_CONFLICT');
    expect((await create({ matchSignerThumbprint: T1, matchSigner: 'Vendor Inc' })).status).toBe(201);
    expect((await create({ matchSignerGroupId: gid })).status).toBe(201);
    // A group of another organization, or none at all, is 400.
    const other = await t.call('POST', `${API}/pam/signer-groups`, {
      token: sys,
      body: { orgId: w.orgA2.id, name: 'Elsewhere' },
    });
    const foreign = await create({ matchSignerGroupId: other.body.signerGroup.id });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toContain('matchSignerGroupId');
    // The preview checks the group the same way.
    const previewOf = (groupId: string) => rules(sys, 'POST', { orgId: w.orgA1.id, matchSignerGroupId: groupId }, '/preview');
    expect((await previewOf(gid)).status).toBe(200);
    const foreignPreview = await previewOf(other.body.signerGroup.id);
    expect(foreignPreview.status).toBe(400);
    expect(foreignPreview.body.error).toContain('matchSignerGroupId');
  });

  it('01§4.9 ignore is invalid for tool-action rules (valid for executable and user rules)', async () => {
    const res = await create({ verdict: 'ignore', matchToolName: 'execute_command' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('PAM_RULE_IGNORE_TOOL_ACTION');
    expect((await create({ verdict: 'ignore', matchRiskTier: 2 })).status).toBe(400);
    expect((await create({ verdict: 'ignore', matchPathGlob: 'C:/Windows/**' })).status).toBe(201);
    expect((await create({ verdict: 'ignore', matchUser: 'svc-backup' })).status).toBe(201);
  });

  it('01§4.9 matchNegate keys must name a criterion the rule sets', async () => {
    const res = await create({ matchHash: H1, matchNegate: ['signer'] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('PAM_RULE_NEGATE_INVALID');
    expect((await create({ matchHash: H1, matchNegate: ['bogus'] })).status).toBe(400);
    expect((await create({ matchHash: H1, matchSigner: 'X', matchNegate: ['signer', 'hash'] })).status).toBe(201);
  });

  it('04 PAM matchRiskTier must be reachable by the tool selector (catalogue), else 400 with validTiers; unknown tools fail open', async () => {
    const single = await create({ matchToolName: 'analyze_metrics', matchRiskTier: 3 });
    expect(single.status).toBe(400);
    expect(single.body).toEqual({ error: expect.any(String), code: 'pam_rule_risk_tier_unreachable', validTiers: [1] });
    const union = await create({ matchRiskTier: 4 });
    expect(union.status).toBe(400);
    expect(union.body.code).toBe('pam_rule_risk_tier_unreachable');
    expect(union.body.validTiers).toEqual([1, 2, 3]);
    expect((await create({ matchRiskTier: 0 })).body.validTiers).toEqual([1, 2, 3]);
    expect((await create({ matchToolName: 'DISK_CLEANUP', matchRiskTier: 3 })).status).toBe(201);
    expect((await create({ matchToolName: 'disk_cleanup', matchRiskTier: 2 })).body.validTiers).toEqual([1, 3]);
    expect((await create({ matchToolName: 'not_in_the_catalogue', matchRiskTier: 4 })).status).toBe(201);
    expect((await create({ matchRiskTier: 2 })).status).toBe(201);
    // A negated tier is reachable when the selector reaches any other tier.
    expect(
      (await create({ matchToolName: 'analyze_metrics', matchRiskTier: 1, matchNegate: ['riskTier'] })).status,
    ).toBe(400);
    expect((await create({ matchToolName: 'disk_cleanup', matchRiskTier: 1, matchNegate: ['riskTier'] })).status).toBe(
      201,
    );
  });

  it('01§4.9 timeWindow: HH:MM 24-hour, days 0-6 without repeats, an IANA time zone, nothing else', async () => {
    const bad = [
      { start: '24:00', end: '17:00' },
      { start: '9:00', end: '17:00' },
      { start: '09:60', end: '17:00' },
      { start: '09:00' },
      { start: '09:00', end: '17:00', days: [7] },
      { start: '09:00', end: '17:00', days: [-1] },
      { start: '09:00', end: '17:00', days: [] },
      { start: '09:00', end: '17:00', days: [1, 1] },
      { start: '09:00', end: '17:00', timezone: 'Mars/Olympus_Mons' },
      { start: '09:00', end: '17:00', tz: 'UTC' },
    ];
    for (const timeWindow of bad) {
      const res = await create({ matchHash: H1, timeWindow });
      expect({ timeWindow, status: res.status }).toEqual({ timeWindow, status: 400 });
    }
    expect(
      (
        await create({
          matchHash: H1,
          timeWindow: { start: '22:00', end: '06:00', days: [0, 6], timezone: 'America/Los_Angeles' },
        })
      ).status,
    ).toBe(201);
  });

  it('01§4.9 PATCH is validated against the merged rule', async () => {
    const exe = await createRule(t, sys, {
      orgId: w.orgA1.id,
      name: 'exe',
      matchPathGlob: '**',
      matchSigner: 'Vendor Inc',
    });
    const tool = await createRule(t, sys, { orgId: w.orgA1.id, name: 'tool', matchToolName: 'execute_command' });
    const cases: [string, Record<string, unknown>, string][] = [
      [exe.id, { matchPathGlob: null, matchSigner: null }, 'PAM_RULE_NO_CRITERIA'],
      [exe.id, { matchToolName: 'execute_command' }, 'PAM_RULE_MIXED_CRITERIA'],
      [exe.id, { matchNegate: ['hash'] }, 'PAM_RULE_NEGATE_INVALID'],
      [tool.id, { verdict: 'ignore' }, 'PAM_RULE_IGNORE_TOOL_ACTION'],
      [tool.id, { matchRiskTier: 1 }, 'pam_rule_risk_tier_unreachable'],
      [tool.id, { matchHash: H1 }, 'PAM_RULE_MIXED_CRITERIA'],
    ];
    for (const [id, body, code] of cases) {
      const res = await patch(id, body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code });
    }
    const group = await t.call('POST', `${API}/pam/signer-groups`, {
      token: sys,
      body: { orgId: w.orgA1.id, name: 'G' },
    });
    expect((await patch(exe.id, { matchSignerGroupId: group.body.signerGroup.id })).body.code).toBe(
      'PAM_RULE_SIGNER_CONFLICT',
    );
    expect((await patch(exe.id, { matchSignerGroupId: group.body.signerGroup.id, matchSigner: null })).status).toBe(
      200,
    );
    const empty = await patch(exe.id, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('No updates provided');
    expect((await patch(exe.id, { orgId: w.orgA2.id })).status).toBe(400);
    // Nothing was changed by the refused PATCHes.
    expect(t.db.select().from(pamRules).where(eq(pamRules.id, tool.id)).get()).toMatchObject({
      verdict: 'require_approval',
      matchRiskTier: null,
      matchHash: null,
    });
  });

  it('01§4.9 permissions: reads devices:read; writes pam:manage_policy + MFA; preview without MFA', async () => {
    const tech = await seedUser(t, {
      email: 'tech@a1.test',
      org: { orgId: w.orgA1.id, roleId: ROLES.orgTechnician },
      login: 'mint',
      mfa: true,
    });
    const viewer = await seedUser(t, {
      email: 'viewer@a1.test',
      org: { orgId: w.orgA1.id, roleId: ROLES.orgViewer },
      login: 'mint',
      mfa: true,
    });
    const noMfa = await seedUser(t, {
      email: 'admin-nomfa@a1.test',
      org: { orgId: w.orgA1.id },
      login: 'mint',
      mfa: false,
    });
    expect((await rules(tech.token, 'GET')).status).toBe(200);
    expect((await rules(viewer.token, 'GET')).status).toBe(200);
    expect((await rules(tech.token, 'POST', { name: 'x', matchHash: H1 })).status).toBe(403);
    const mfa = await rules(noMfa.token, 'POST', { name: 'x', matchHash: H1 });
    expect(mfa.status).toBe(403);
    expect(mfa.body.code).toBe('MFA_REQUIRED');
    expect((await rules(w.tokens.orgUser, 'POST', { name: 'x', matchHash: H1 })).status).toBe(201);
    const preview = await rules(noMfa.token, 'POST', { matchHash: H1 }, '/preview');
    expect(preview.status).toBe(200);
    expect((await rules(tech.token, 'POST', { matchHash: H1 }, '/preview')).status).toBe(403);
  });

  it('01§4.9 the organization comes from the caller, or from the body for partner and system callers (must be reachable)', async () => {
    const noOrg = await rules(sys, 'POST', { name: 'x', matchHash: H1 });
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.error).toContain('orgId');
    expect((await rules(w.tokens.aAdmin, 'POST', { name: 'x', matchHash: H1 })).status).toBe(400);
    expect((await rules(w.tokens.bAdmin, 'POST', { orgId: w.orgA1.id, name: 'x', matchHash: H1 })).status).toBe(403);
    expect((await rules(w.tokens.aSelAdmin, 'POST', { orgId: w.orgA2.id, name: 'x', matchHash: H1 })).status).toBe(403);
    const own = await rules(w.tokens.orgUser, 'POST', { name: 'x', matchHash: H1 });
    expect(own.body.rule.orgId).toBe(w.orgA1.id);
    const other = await rules(w.tokens.orgUser, 'POST', { orgId: w.orgA2.id, name: 'x', matchHash: H1 });
    expect(other.status).toBe(403);
    const foreignSite = await create({ matchHash: H1, siteId: w.siteA2a.id });
    expect(foreignSite.status).toBe(400);
    expect(foreignSite.body.error).toContain('siteId');
  });

  it('01§4.9 site-restricted users: rules of their sites only; organization-wide rules refused on write (403)', async () => {
    const orgWide = await createRule(t, sys, { orgId: w.orgA1.id, name: 'org', matchHash: H1 });
    const other = await createRule(t, sys, { orgId: w.orgA1.id, name: 'b', matchHash: H1, siteId: w.siteA1b.id });
    const mine = await rules(w.tokens.siteUser, 'POST', { name: 'mine', matchHash: H1, siteId: w.siteA1a.id });
    expect(mine.status).toBe(201);
    expect((await rules(w.tokens.siteUser, 'POST', { name: 'wide', matchHash: H1 })).status).toBe(403);
    expect((await rules(w.tokens.siteUser, 'POST', { name: 'b', matchHash: H1, siteId: w.siteA1b.id })).status).toBe(
      403,
    );
    expect((await patch(orgWide.id, { name: 'renamed' }, w.tokens.siteUser)).status).toBe(403);
    expect((await patch(other.id, { name: 'renamed' }, w.tokens.siteUser)).status).toBe(403);
    expect((await patch(mine.body.rule.id, { siteId: w.siteA1b.id }, w.tokens.siteUser)).status).toBe(403);
    expect((await patch(mine.body.rule.id, { siteId: null }, w.tokens.siteUser)).status).toBe(403);
    expect((await t.call('DELETE', `${API}/pam/rules/${orgWide.id}`, { token: w.tokens.siteUser })).status).toBe(403);
    expect((await patch(mine.body.rule.id, { priority: 7 }, w.tokens.siteUser)).status).toBe(200);
    // Reads: their sites' rules and the organization-wide ones.
    const list = await t.call('GET', `${API}/pam/rules`, { token: w.tokens.siteUser });
    expect(list.body.rules.map((r: { name: string }) => r.name).sort()).toEqual(['mine', 'org']);
    expect((await t.call('GET', `${API}/pam/rules/${other.id}`, { token: w.tokens.siteUser })).status).toBe(404);
    // Organization-wide objects: signer groups and defaults.
    expect(
      (await t.call('POST', `${API}/pam/signer-groups`, { token: w.tokens.siteUser, body: { name: 'G' } })).status,
    ).toBe(403);
    expect(
      (
        await t.call('PUT', `${API}/pam/config`, {
          token: w.tokens.siteUser,
          body: { defaultUnmatchedVerdict: 'auto_deny' },
        })
      ).status,
    ).toBe(403);
  });

  // ---- the v0.112.0 upgrade and re-approval ----

  it('01§4.9/§9 the 0.112.0 migration suspends auto_approve rules (once, idempotent); PATCH {reapprove:true} restores them', async () => {
    const sqlText = fs.readFileSync(path.join(ROOT, 'drizzle/0003_pam.sql'), 'utf8');
    const update = sqlText
      .split('--> statement-breakpoint')
      .map((s) => s.trim())
      .find((s) => s.includes('UPDATE `pam_rules`'));
    expect(update).toBeDefined();
    const auto = await createRule(t, sys, { orgId: w.orgA1.id, name: 'auto', verdict: 'auto_approve', matchHash: H1 });
    const deny = await createRule(t, sys, {
      orgId: w.orgA1.id,
      name: 'deny',
      verdict: 'auto_deny',
      matchHash: H1,
      priority: 200,
    });
    expect(t.db.$client.prepare(update ?? '').run().changes).toBe(1);
    expect(t.db.$client.prepare(update ?? '').run().changes).toBe(0);
    const suspended = await t.call('GET', `${API}/pam/rules/${auto.id}`, { token: sys });
    expect(suspended.body.rule).toMatchObject({
      verdict: 'require_approval',
      suspendedVerdict: 'auto_approve',
      reapprovedAt: null,
    });
    expect((await t.call('GET', `${API}/pam/rules/${deny.id}`, { token: sys })).body.rule).toMatchObject({
      verdict: 'auto_deny',
      suspendedVerdict: null,
    });

    // While suspended the rule asks for approval.
    expect((await ingest(t, w.devA1a, UAC)).body.status).toBe('pending');

    const withVerdict = await patch(auto.id, { reapprove: true, verdict: 'auto_approve' });
    expect(withVerdict.status).toBe(400);
    const noMfa = await seedUser(t, { email: 'nomfa@a1.test', org: { orgId: w.orgA1.id }, login: 'mint', mfa: false });
    expect((await patch(auto.id, { reapprove: true }, noMfa.token)).status).toBe(403);
    expect((await patch(deny.id, { reapprove: true })).body).toMatchObject({
      error: 'Rule is not suspended pending re-approval',
    });

    const restored = await patch(auto.id, { reapprove: true }, w.tokens.orgUser);
    expect(restored.status).toBe(200);
    expect(restored.body.rule).toMatchObject({
      verdict: 'auto_approve',
      suspendedVerdict: null,
      reapprovedAt: expect.any(String),
      reapprovedByUserId: w.users.orgUser.id,
    });
    const again = await patch(auto.id, { reapprove: true });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('Rule is not suspended pending re-approval');
    expect((await ingest(t, w.devA1a, UAC)).body.status).toBe('auto_approved');
    const audit = t.db
      .select()
      .from(auditLogs)
      .where(and(eq(auditLogs.action, 'pam.rule.reapprove'), eq(auditLogs.resourceId, auto.id)))
      .all();
    expect(audit).toHaveLength(1);
  });

  it('01§4.9 an explicit verdict on a suspended rule is a new decision: the suspension ends without re-approval', async () => {
    const auto = await createRule(t, sys, { orgId: w.orgA1.id, name: 'auto', verdict: 'auto_approve', matchHash: H1 });
    t.db
      .update(pamRules)
      .set({ verdict: 'require_approval', suspendedVerdict: 'auto_approve' })
      .where(eq(pamRules.id, auto.id))
      .run();
    const res = await patch(auto.id, { verdict: 'auto_deny' });
    expect(res.body.rule).toMatchObject({ verdict: 'auto_deny', suspendedVerdict: null, reapprovedAt: null });
  });

  // ---- signer groups ----

  it('04 PAM signer groups: CRUD, names unique per organization, thumbprints SHA-256, in-use groups kept', async () => {
    const res = await t.call('POST', `${API}/pam/signer-groups`, {
      token: sys,
      body: {
        orgId: w.orgA1.id,
        name: 'Trusted',
        signers: ['Vendor Inc', 'Vendor Inc'],
        thumbprints: [T1.toUpperCase()],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.signerGroup).toMatchObject({
      orgId: w.orgA1.id,
      name: 'Trusted',
      signers: ['Vendor Inc'],
      thumbprints: [T1],
      description: null,
    });
    const id = res.body.signerGroup.id;
    expect(
      (await t.call('POST', `${API}/pam/signer-groups`, { token: sys, body: { orgId: w.orgA1.id, name: 'Trusted' } }))
        .status,
    ).toBe(409);
    expect(
      (
        await t.call('POST', `${API}/pam/signer-groups`, {
          token: sys,
          body: { orgId: w.orgA1.id, name: 'Bad', thumbprints: ['abc'] },
        })
      ).status,
    ).toBe(400);
    expect((await t.call('POST', `${API}/pam/signer-groups`, { token: sys, body: { name: 'No org' } })).status).toBe(
      400,
    );
    const list = await t.call('GET', `${API}/pam/signer-groups?orgId=${w.orgA1.id}`, { token: sys });
    expect(list.body).toEqual({ success: true, signerGroups: [expect.objectContaining({ id })] });
    // Without orgId: every group the caller reaches, by name.
    await t.call('POST', `${API}/pam/signer-groups`, { token: sys, body: { orgId: w.orgA2.id, name: 'Another' } });
    const names = async (token: string) =>
      ((await t.call('GET', `${API}/pam/signer-groups`, { token })).body.signerGroups as { name: string }[]).map((g) => g.name);
    expect(await names(sys)).toEqual(['Another', 'Trusted']);
    expect(await names(w.tokens.orgUser)).toEqual(['Trusted']);
    expect(await names(w.tokens.bAdmin)).toEqual([]);
    expect(
      (await t.call('GET', `${API}/pam/signer-groups/${id}`, { token: w.tokens.orgUser })).body.signerGroup.id,
    ).toBe(id);
    expect((await t.call('GET', `${API}/pam/signer-groups/${id}`, { token: w.tokens.bAdmin })).status).toBe(404);
    const updated = await t.call('PATCH', `${API}/pam/signer-groups/${id}`, {
      token: sys,
      body: { signers: ['Other Corp'], description: 'd' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.signerGroup).toMatchObject({ signers: ['Other Corp'], thumbprints: [T1], description: 'd' });
    expect((await t.call('PATCH', `${API}/pam/signer-groups/${id}`, { token: sys, body: {} })).status).toBe(400);

    const rule = await createRule(t, sys, { orgId: w.orgA1.id, name: 'by group', matchSignerGroupId: id });
    const inUse = await t.call('DELETE', `${API}/pam/signer-groups/${id}`, { token: sys });
    expect(inUse.status).toBe(409);
    expect(inUse.body.code).toBe('PAM_SIGNER_GROUP_IN_USE');
    await t.call('DELETE', `${API}/pam/rules/${rule.id}`, { token: sys });
    expect((await t.call('DELETE', `${API}/pam/signer-groups/${id}`, { token: sys })).body).toEqual({ success: true });
    expect((await t.call('GET', `${API}/pam/signer-groups/${id}`, { token: sys })).status).toBe(404);
  });

  // ---- organization defaults ----

  it('04 PAM GET/PUT /pam/config: require_approval by default; auto_deny denies unmatched requests; the default duration applies', async () => {
    const initial = await t.call('GET', `${API}/pam/config?orgId=${w.orgA1.id}`, { token: sys });
    expect(initial.body).toEqual({
      success: true,
      config: {
        orgId: w.orgA1.id,
        defaultUnmatchedVerdict: 'require_approval',
        defaultApprovalDurationMinutes: null,
        updatedAt: null,
      },
    });
    expect((await t.call('GET', `${API}/pam/config`, { token: sys })).status).toBe(400);
    expect((await t.call('GET', `${API}/pam/config`, { token: w.tokens.orgUser })).body.config.orgId).toBe(w.orgA1.id);
    expect(
      (
        await t.call('PUT', `${API}/pam/config`, {
          token: sys,
          body: { orgId: w.orgA1.id, defaultUnmatchedVerdict: 'auto_approve' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await t.call('PUT', `${API}/pam/config`, {
          token: sys,
          body: { orgId: w.orgA1.id, defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 0 },
        })
      ).status,
    ).toBe(400);

    const put = await t.call('PUT', `${API}/pam/config`, {
      token: w.tokens.orgUser,
      body: { defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 45 },
    });
    expect(put.status).toBe(200);
    expect(put.body.config).toMatchObject({ defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 45 });
    const denied = await ingest(t, w.devA1a, UAC);
    expect(denied.status).toBe(201);
    expect(denied.body.status).toBe('denied');
    const row = t.db.select().from(elevationRequests).where(eq(elevationRequests.id, denied.body.id)).get();
    expect(row).toMatchObject({
      status: 'denied',
      decisionSource: 'pam_rule',
      pamRuleId: null,
      denialReason: 'Denied by the organization default (no rule matched)',
    });

    await createRule(t, sys, { orgId: w.orgA1.id, name: 'auto', verdict: 'auto_approve', matchHash: H1 });
    const before = Date.now();
    const approved = await ingest(t, w.devA1a, UAC);
    expect(approved.body.status).toBe('auto_approved');
    const minutes = (Date.parse(approved.body.expiresAt) - before) / 60_000;
    expect(minutes).toBeGreaterThan(44.9);
    expect(minutes).toBeLessThan(45.1);
    // Other organizations keep their own defaults.
    expect((await ingest(t, w.devA2, UAC)).body.status).toBe('pending');
  });

  // ---- preview ----

  it('04 PAM rule preview: totals, status breakdown, a sample of at most 10, windowDays 1-90 (default 30)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await ingest(t, w.devA1a, UAC)).body.id);
    for (let i = 0; i < 3; i++)
      await ingest(t, w.devA1a, { ...UAC, target_executable_path: 'C:\\Windows\\System32\\mmc.exe' });
    await ingest(t, w.devA1a, AI);
    await ingest(t, w.devA2, UAC);
    const old = await ingest(t, w.devA1a, UAC);
    t.db
      .update(elevationRequests)
      .set({ requestedAt: new Date(Date.now() - 40 * 86_400_000).toISOString() })
      .where(eq(elevationRequests.id, old.body.id))
      .run();
    for (const id of ids.slice(0, 2))
      t.db.update(elevationRequests).set({ status: 'denied' }).where(eq(elevationRequests.id, id)).run();

    const res = await t.call('POST', `${API}/pam/rules/preview`, {
      token: sys,
      body: { orgId: w.orgA1.id, matchPathGlob: 'C:/Program Files/**' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      totalMatched: 12,
      totalScanned: 16,
      windowDays: 30,
      truncated: false,
    });
    expect(res.body.statusBreakdown).toEqual({ pending: 10, denied: 2 });
    expect(res.body.sample).toHaveLength(10);
    expect(res.body.sample[0]).toMatchObject({ flowType: 'uac_intercept', deviceHostname: 'ws-a1a' });

    const wide = await t.call('POST', `${API}/pam/rules/preview`, {
      token: sys,
      body: { orgId: w.orgA1.id, matchPathGlob: 'C:/Program Files/**', windowDays: 90 },
    });
    expect(wide.body).toMatchObject({ totalMatched: 13, totalScanned: 17, windowDays: 90 });
    const tool = await t.call('POST', `${API}/pam/rules/preview`, {
      token: sys,
      body: { orgId: w.orgA1.id, matchToolName: AI.tool_name },
    });
    expect(tool.body.totalMatched).toBe(1);
    for (const windowDays of [0, 91, 1.5]) {
      expect(
        (
          await t.call('POST', `${API}/pam/rules/preview`, {
            token: sys,
            body: { orgId: w.orgA1.id, matchHash: H1, windowDays },
          })
        ).status,
      ).toBe(400);
    }
    const invalid = await t.call('POST', `${API}/pam/rules/preview`, {
      token: sys,
      body: { orgId: w.orgA1.id, timeWindow: { start: '09:00', end: '10:00' } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('PAM_RULE_NO_CRITERIA');
    const site = await t.call('POST', `${API}/pam/rules/preview`, {
      token: sys,
      body: { orgId: w.orgA1.id, siteId: w.siteA1b.id, matchHash: H1 },
    });
    expect(site.body).toMatchObject({ totalMatched: 0, totalScanned: 0 });
  });

  it("api-notes PAM: rules never decide a person's own request for administrator rights, so a rule preview neither counts nor samples technicians' JIT requests", async () => {
    const tech = await seedUser(t, {
      email: 'tech@a1.test',
      org: { orgId: w.orgA1.id, roleId: ROLES.orgTechnician },
      login: 'mint',
    });
    const jit = await t.call('POST', `${API}/pam/elevation-requests`, {
      token: tech.token,
      body: { deviceId: w.devA1a.deviceId, reason: 'patch the driver' },
    });
    expect(jit.status, jit.text).toBe(201);
    expect(jit.body.request.subjectUsername).toBe('tech@a1.test');
    const uac = await ingest(t, w.devA1a, { ...UAC, subject_username: 'tech@a1.test' });
    expect(uac.status, uac.text).toBe(201);
    const res = await t.call('POST', `${API}/pam/rules/preview`, {
      token: sys,
      body: { orgId: w.orgA1.id, matchUser: 'tech@a1.test' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ totalMatched: 1, totalScanned: 1, statusBreakdown: { pending: 1 } });
    expect(res.body.sample.map((r: { id: string }) => r.id)).toEqual([uac.body.id]);
  });

  it('04 PAM a tool-action rule decides an AI tool action at ingest with its verdict', async () => {
    await createRule(t, sys, {
      orgId: w.orgA1.id,
      name: 'deny tool',
      verdict: 'auto_deny',
      matchToolName: 'execute_command',
    });
    const res = await ingest(t, w.devA1a, AI);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'denied', reason: 'Denied by rule "deny tool"' });
  });
});
