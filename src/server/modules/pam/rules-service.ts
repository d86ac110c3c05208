import { and, asc, count, desc, eq, gte, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  PamConfigPutSchema,
  PamRuleCreate,
  PamRuleListQuerySchema,
  PamRulePatch,
  PamRulePreview,
  PamSignerGroupCreateSchema,
  PamSignerGroupPatchSchema,
} from '../../../contract/pam.js';
import type { Db } from '../../db/connection.js';
import {
  inJson,
  insertRow,
  preparedQueries,
  preparedShapes,
  rowById,
  rowQuery,
  shapeConditions,
  shapeOf,
  updateRow,
} from '../../db/prepared.js';
import { elevationRequests, pamOrgConfig, pamRules, pamSignerGroups } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { DomainError, badRequest, conflict, fieldError, notFound } from '../../errors.js';
import { recordAudit } from '../audit/recorder.js';
import { deleteAudited } from '../shared/audited.js';
import { canAccessOrg, readOrgIds, requireOrgRow, requireSite } from '../tenancy/access.js';
import {
  RULE_DECIDED_FLOW_TYPES,
  ruleMatches,
  type EngineRule,
  type RuleCriteria,
  type SignerGroupData,
} from './engine.js';
import { engineRequestOf, type ElevationQueries } from './requests-queries.js';
import { validateRuleShape, type RuleShape } from './rule-validation.js';
import { SYSTEM_CALLER, assertWritableScope, siteVisible, targetOrg } from './scope.js';

export type PamRuleRow = typeof pamRules.$inferSelect;
export type SignerGroupRow = typeof pamSignerGroups.$inferSelect;

export interface PamOrgDefaults {
  orgId: string;
  defaultUnmatchedVerdict: 'require_approval' | 'auto_deny';
  defaultApprovalDurationMinutes: number | null;
  updatedAt: string | null;
}

type CriteriaInput = Partial<{ [K in keyof RuleCriteria]: RuleCriteria[K] | undefined }>;

/** The criteria of a body over a base (absent keys keep the base's value; null clears). */
export function criteriaOf(body: CriteriaInput, base?: RuleCriteria): RuleCriteria {
  const pick = <K extends keyof RuleCriteria>(key: K): RuleCriteria[K] | null => {
    const value = body[key];
    return value === undefined ? (base ? base[key] : null) : value;
  };
  return {
    matchSigner: pick('matchSigner'),
    matchSignerGroupId: pick('matchSignerGroupId'),
    matchSignerThumbprint: pick('matchSignerThumbprint'),
    matchHash: pick('matchHash'),
    matchPathGlob: pick('matchPathGlob'),
    matchParentImage: pick('matchParentImage'),
    matchCommandLine: pick('matchCommandLine'),
    matchUser: pick('matchUser'),
    matchAdGroup: pick('matchAdGroup'),
    matchToolName: pick('matchToolName'),
    matchRiskTier: pick('matchRiskTier'),
    matchNegate: pick('matchNegate'),
    timeWindow: pick('timeWindow'),
  };
}

const nowIso = () => new Date().toISOString();

/** Rule preview scans at most this many of the newest requests in its window (then `truncated`). */
export const PREVIEW_SCAN_LIMIT = 5000;

/** Signer groups: an organization's (the engine's), every one or those of some organizations (the list, by name),
 * and whether one is of an organization; prepared once per database. */
const signerGroupQueries = preparedQueries((db) => {
  const byName = [asc(pamSignerGroups.name), asc(pamSignerGroups.id)];
  return {
    ofOrg: db.select().from(pamSignerGroups).where(eq(pamSignerGroups.orgId, sql.placeholder('orgId'))).prepare(),
    all: db.select().from(pamSignerGroups).orderBy(...byName).prepare(),
    ofOrgs: db.select().from(pamSignerGroups).where(inJson(pamSignerGroups.orgId, 'orgIds')).orderBy(...byName).prepare(),
    inOrg: db
      .select({ id: pamSignerGroups.id })
      .from(pamSignerGroups)
      .where(and(eq(pamSignerGroups.id, sql.placeholder('id')), eq(pamSignerGroups.orgId, sql.placeholder('orgId'))))
      .prepare(),
    // The organization's group of this name (names are unique per organization), and how many rules use a group.
    named: db
      .select({ id: pamSignerGroups.id })
      .from(pamSignerGroups)
      .where(and(eq(pamSignerGroups.orgId, sql.placeholder('orgId')), eq(pamSignerGroups.name, sql.placeholder('name'))))
      .prepare(),
    rulesUsing: db.select({ n: count() }).from(pamRules).where(eq(pamRules.matchSignerGroupId, sql.placeholder('id'))).prepare(),
  };
});

/** An organization's PAM defaults row (absent until they are first set), prepared once per database. */
const orgConfigOf = preparedQueries((db) => db.select().from(pamOrgConfig).where(eq(pamOrgConfig.orgId, sql.placeholder('orgId'))).prepare());

/** PUT /pam/config's write: the organization's defaults row, inserted or replaced (every column a placeholder of
 * its name), prepared once per database. */
const putConfigOf = preparedQueries((db) => {
  const set = {
    defaultUnmatchedVerdict: sql`${sql.placeholder('defaultUnmatchedVerdict')}`,
    defaultApprovalDurationMinutes: sql`${sql.placeholder('defaultApprovalDurationMinutes')}`,
    updatedBy: sql`${sql.placeholder('updatedBy')}`,
    updatedAt: sql`${sql.placeholder('updatedAt')}`,
  };
  return db
    .insert(pamOrgConfig)
    .values({ orgId: sql`${sql.placeholder('orgId')}`, ...set })
    .onConflictDoUpdate({ target: pamOrgConfig.orgId, set })
    .prepare();
});

/** The engine's rules of an organization (enabled, by priority, then age): for a device of no site only the
 * organization-wide ones (`orgWide`), else those and the site's (`ofSite`, placeholder siteId); prepared once per
 * database. */
const engineRulesOf = preparedQueries((db) => {
  const ruleOrder = [asc(pamRules.priority), asc(pamRules.createdAt), asc(pamRules.id)];
  const enabledOfOrg = and(eq(pamRules.orgId, sql.placeholder('orgId')), eq(pamRules.enabled, true));
  return {
    orgWide: rowQuery(db, pamRules, and(enabledOfOrg, isNull(pamRules.siteId)), { orderBy: ruleOrder }),
    ofSite: rowQuery(db, pamRules, and(enabledOfOrg, or(isNull(pamRules.siteId), eq(pamRules.siteId, sql.placeholder('siteId')))), {
      orderBy: ruleOrder,
    }),
  };
});

/** The rules of a list, per shape: o within the organizations of the JSON array `orgIds`, s of one `siteId`; a
 * site-restricted caller sees organization-wide rules and, S, those of its sites (`siteIds`), or, N, no others. */
const ruleListOf = preparedShapes((db, shape) =>
  db
    .select()
    .from(pamRules)
    .where(
      and(
        ...shapeConditions(shape, {
          o: () => inJson(pamRules.orgId, 'orgIds'),
          s: () => eq(pamRules.siteId, sql.placeholder('siteId')),
          S: () => or(isNull(pamRules.siteId), inJson(pamRules.siteId, 'siteIds')),
          N: () => isNull(pamRules.siteId),
        }),
      ),
    )
    .orderBy(asc(pamRules.priority), asc(pamRules.createdAt), asc(pamRules.id))
    .prepare(),
);

/** Elevation rules, signer groups and organization defaults (01 §2.12, §4.9; 04 wire notes "PAM"). */
export class PamRulesService {
  constructor(
    private readonly db: Db,
    private readonly requests: ElevationQueries,
  ) {}

  // ---- rules ----

  listRules(ctx: RequestContext, query: z.infer<typeof PamRuleListQuerySchema>): PamRuleRow[] {
    const { caller } = ctx;
    const orgIds = readOrgIds(this.db, caller, query.orgId);
    if (orgIds !== null && orgIds.length === 0) return [];
    if (query.siteId) requireSite(this.db, caller, query.siteId);
    const sites = caller.siteIds;
    const shape = shapeOf({ o: orgIds !== null, s: query.siteId, S: sites !== null && sites.length > 0, N: sites !== null && sites.length === 0 });
    return ruleListOf(this.db, shape).all({ orgIds: JSON.stringify(orgIds), siteId: query.siteId, siteIds: JSON.stringify(caller.siteIds) });
  }

  getRule(ctx: RequestContext, id: string): PamRuleRow {
    const rule = rowById(this.db, pamRules, id);
    if (!rule || !canAccessOrg(this.db, ctx.caller, rule.orgId) || !siteVisible(ctx.caller, rule.siteId, true)) {
      throw notFound('Rule not found');
    }
    return rule;
  }

  /** A signer group referenced by a rule must be one of the rule's organization. */
  private assertGroupOfOrg(orgId: string, groupId: string | null): void {
    if (groupId === null) return;
    if (!signerGroupQueries(this.db).inOrg.get({ id: groupId, orgId })) throw fieldError('matchSignerGroupId', 'no such signer group in the organization');
  }

  createRule(ctx: RequestContext, body: PamRuleCreate): PamRuleRow {
    const { caller } = ctx;
    const org = targetOrg(this.db, caller, body.orgId);
    const siteId = body.siteId ?? null;
    assertWritableScope(this.db, caller, org.id, siteId);
    const shape: RuleShape = { verdict: body.verdict, ...criteriaOf(body) };
    validateRuleShape(shape);
    this.assertGroupOfOrg(org.id, shape.matchSignerGroupId);
    return this.db.$client.transaction(() => {
      const rule = insertRow(this.db, pamRules, {
        orgId: org.id,
        siteId,
        name: body.name,
        verdict: body.verdict,
        priority: body.priority,
        enabled: body.enabled,
        ...criteriaOf(body),
        approvalDurationMinutes: body.approvalDurationMinutes ?? null,
        createdBy: caller.userId,
      });
      recordAudit(this.db, ctx, {
        action: 'pam.rule.create',
        resourceType: 'pam_rule',
        resourceId: rule.id,
        resourceName: rule.name,
        orgId: rule.orgId,
        details: { verdict: rule.verdict, priority: rule.priority, siteId: rule.siteId, enabled: rule.enabled },
      });
      return rule;
    })();
  }

  /** A rule the caller may change: 404 out of reach, 403 outside a site restriction (org-wide included). */
  private writableRule(ctx: RequestContext, id: string): PamRuleRow {
    const rule = rowById(this.db, pamRules, id);
    if (!rule || !canAccessOrg(this.db, ctx.caller, rule.orgId)) throw notFound('Rule not found');
    assertWritableScope(this.db, ctx.caller, rule.orgId, rule.siteId);
    return rule;
  }

  updateRule(ctx: RequestContext, id: string, body: PamRulePatch): PamRuleRow {
    const { caller } = ctx;
    const given = Object.entries(body).filter(([, v]) => v !== undefined);
    if (given.length === 0 || (given.length === 1 && body.reapprove === false))
      throw badRequest('No updates provided', 'NO_UPDATES');
    return this.db.$client.transaction(() => {
      const current = this.writableRule(ctx, id);
      const siteId = body.siteId !== undefined ? body.siteId : current.siteId;
      if (body.siteId !== undefined) assertWritableScope(this.db, caller, current.orgId, siteId);

      let verdict = body.verdict ?? current.verdict;
      let suspendedVerdict = current.suspendedVerdict;
      let reapproval: { reapprovedAt: string; reapprovedByUserId: string | null } | null = null;
      if (body.reapprove === true) {
        if (body.verdict !== undefined) {
          throw badRequest(
            'A re-approval restores the suspended verdict; do not send a verdict with it',
            'PAM_REAPPROVE_WITH_VERDICT',
          );
        }
        if (current.suspendedVerdict === null)
          throw badRequest('Rule is not suspended pending re-approval', 'PAM_RULE_NOT_SUSPENDED');
        verdict = current.suspendedVerdict;
        suspendedVerdict = null;
        reapproval = { reapprovedAt: nowIso(), reapprovedByUserId: caller.userId };
      } else if (body.verdict !== undefined) {
        // An explicit verdict is a new decision: the suspended one no longer waits for re-approval.
        suspendedVerdict = null;
      }

      const criteria = criteriaOf(body, current);
      validateRuleShape({ verdict, ...criteria });
      this.assertGroupOfOrg(current.orgId, criteria.matchSignerGroupId);

      const updated = updateRow(this.db, pamRules, current, {
        name: body.name ?? current.name,
        priority: body.priority ?? current.priority,
        enabled: body.enabled ?? current.enabled,
        siteId,
        verdict,
        suspendedVerdict,
        ...criteria,
        approvalDurationMinutes:
          body.approvalDurationMinutes !== undefined ? body.approvalDurationMinutes : current.approvalDurationMinutes,
        ...(reapproval ?? {}),
        updatedAt: nowIso(),
      });
      if (!updated) throw notFound('Rule not found');
      const changed = given.map(([k]) => k).filter((k) => k !== 'reapprove');
      recordAudit(this.db, ctx, {
        action: reapproval ? 'pam.rule.reapprove' : 'pam.rule.update',
        resourceType: 'pam_rule',
        resourceId: id,
        resourceName: updated.name,
        orgId: updated.orgId,
        details: {
          changed,
          verdict: updated.verdict,
          previousVerdict: current.verdict,
          ...(reapproval ? { restoredVerdict: verdict } : {}),
        },
      });
      return updated;
    })();
  }

  deleteRule(ctx: RequestContext, id: string): void {
    this.db.$client.transaction(() => {
      const rule = this.writableRule(ctx, id);
      deleteAudited(this.db, ctx, pamRules, rule, {
        action: 'pam.rule.delete',
        resourceType: 'pam_rule',
        details: { verdict: rule.verdict, siteId: rule.siteId },
      });
    })();
  }

  /** What the engine needs of an organization: its enabled rules that reach the device's site, its signer
   * groups, and its defaults. */
  engineInputs(
    orgId: string,
    siteId: string | null,
  ): { rules: (EngineRule & PamRuleRow)[]; groups: Map<string, SignerGroupData>; defaults: PamOrgDefaults } {
    const queries = engineRulesOf(this.db);
    const rules = siteId === null ? queries.orgWide.all({ orgId }) : queries.ofSite.all({ orgId, siteId });
    return { rules, groups: this.groupsOf(orgId), defaults: this.defaultsOf(orgId) };
  }

  groupsOf(orgId: string): Map<string, SignerGroupData> {
    const groups = signerGroupQueries(this.db).ofOrg.all({ orgId });
    return new Map(groups.map((g) => [g.id, { signers: g.signers, thumbprints: g.thumbprints }]));
  }

  // ---- rule preview (04 wire notes "Rule preview") ----

  /** What a rule would have matched among the organization's recent requests that rules decide (UAC prompts and
   * AI tool actions: never technicians' requests for administrator rights), within the caller's sites and device
   * groups. */
  preview(ctx: RequestContext, body: PamRulePreview) {
    const { caller } = ctx;
    const org = targetOrg(this.db, caller, body.orgId);
    const siteId = body.siteId ?? null;
    if (siteId !== null) {
      const site = requireSite(this.db, caller, siteId);
      if (site.orgId !== org.id) throw fieldError('siteId', 'not a site of the organization');
    }
    const criteria = criteriaOf(body);
    validateRuleShape({ verdict: body.verdict ?? 'require_approval', ...criteria });
    this.assertGroupOfOrg(org.id, criteria.matchSignerGroupId);
    const since = new Date(Date.now() - body.windowDays * 86_400_000).toISOString();
    let siteFilter: SQL | undefined;
    if (siteId !== null) siteFilter = eq(elevationRequests.siteId, siteId);
    else if (caller.siteIds !== null)
      siteFilter = caller.siteIds.length ? inArray(elevationRequests.siteId, caller.siteIds) : sql`0`;
    const rows = this.db
      .select()
      .from(elevationRequests)
      .where(
        and(
          eq(elevationRequests.orgId, org.id),
          gte(elevationRequests.requestedAt, since),
          inArray(elevationRequests.flowType, [...RULE_DECIDED_FLOW_TYPES]),
          siteFilter,
          this.requests.deviceGroupWhere(ctx),
        ),
      )
      .orderBy(desc(elevationRequests.requestedAt), desc(elevationRequests.id))
      .limit(PREVIEW_SCAN_LIMIT + 1)
      .all();
    const truncated = rows.length > PREVIEW_SCAN_LIMIT;
    const scanned = truncated ? rows.slice(0, PREVIEW_SCAN_LIMIT) : rows;
    const groups = this.groupsOf(org.id);
    const rule = { verdict: body.verdict ?? 'require_approval', ...criteria } as const;
    const matched = scanned.filter((row) => ruleMatches(rule, engineRequestOf(row), groups));
    const statusBreakdown: Record<string, number> = {};
    for (const row of matched) statusBreakdown[row.status] = (statusBreakdown[row.status] ?? 0) + 1;
    return {
      success: true as const,
      totalMatched: matched.length,
      totalScanned: scanned.length,
      windowDays: body.windowDays,
      truncated,
      statusBreakdown,
      sample: this.requests.viewsOf(matched.slice(0, 10).map((r) => r.id)),
    };
  }

  // ---- signer groups ----

  listSignerGroups(ctx: RequestContext, orgId: string | undefined): SignerGroupRow[] {
    const orgIds = readOrgIds(this.db, ctx.caller, orgId);
    if (orgIds !== null && orgIds.length === 0) return [];
    const queries = signerGroupQueries(this.db);
    return orgIds === null ? queries.all.all() : queries.ofOrgs.all({ orgIds: JSON.stringify(orgIds) });
  }

  getSignerGroup(ctx: RequestContext, id: string): SignerGroupRow {
    const group = rowById(this.db, pamSignerGroups, id);
    if (!group || !canAccessOrg(this.db, ctx.caller, group.orgId)) throw notFound('Signer group not found');
    return group;
  }

  private assertGroupNameFree(orgId: string, name: string, exceptId?: string): void {
    const clash = signerGroupQueries(this.db).named.get({ orgId, name });
    if (clash && clash.id !== exceptId)
      throw conflict('A signer group with this name already exists', 'PAM_SIGNER_GROUP_EXISTS');
  }

  createSignerGroup(ctx: RequestContext, body: z.infer<typeof PamSignerGroupCreateSchema>): SignerGroupRow {
    const org = targetOrg(this.db, ctx.caller, body.orgId);
    assertWritableScope(this.db, ctx.caller, org.id, null);
    return this.db.$client.transaction(() => {
      this.assertGroupNameFree(org.id, body.name);
      const group = insertRow(this.db, pamSignerGroups, {
        orgId: org.id,
        name: body.name,
        description: body.description ?? null,
        signers: [...new Set(body.signers)],
        thumbprints: [...new Set(body.thumbprints)],
        createdBy: ctx.caller.userId,
      });
      recordAudit(this.db, ctx, {
        action: 'pam.signer_group.create',
        resourceType: 'pam_signer_group',
        resourceId: group.id,
        resourceName: group.name,
        orgId: group.orgId,
        details: { signers: group.signers.length, thumbprints: group.thumbprints.length },
      });
      return group;
    })();
  }

  updateSignerGroup(ctx: RequestContext, id: string, body: z.infer<typeof PamSignerGroupPatchSchema>): SignerGroupRow {
    if (Object.values(body).every((v) => v === undefined)) throw badRequest('No updates provided', 'NO_UPDATES');
    return this.db.$client.transaction(() => {
      const current = this.getSignerGroup(ctx, id);
      assertWritableScope(this.db, ctx.caller, current.orgId, null);
      if (body.name !== undefined) this.assertGroupNameFree(current.orgId, body.name, id);
      const group = updateRow(this.db, pamSignerGroups, current, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.signers !== undefined ? { signers: [...new Set(body.signers)] } : {}),
        ...(body.thumbprints !== undefined ? { thumbprints: [...new Set(body.thumbprints)] } : {}),
        updatedAt: nowIso(),
      });
      if (!group) throw notFound('Signer group not found');
      recordAudit(this.db, ctx, {
        action: 'pam.signer_group.update',
        resourceType: 'pam_signer_group',
        resourceId: id,
        resourceName: group.name,
        orgId: group.orgId,
        details: { changed: Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined) },
      });
      return group;
    })();
  }

  deleteSignerGroup(ctx: RequestContext, id: string): void {
    this.db.$client.transaction(() => {
      const group = this.getSignerGroup(ctx, id);
      assertWritableScope(this.db, ctx.caller, group.orgId, null);
      const used = signerGroupQueries(this.db).rulesUsing.get({ id })?.n ?? 0;
      if (used > 0) throw conflict(`Signer group is used by ${used} rule(s)`, 'PAM_SIGNER_GROUP_IN_USE');
      deleteAudited(this.db, ctx, pamSignerGroups, group, {
        action: 'pam.signer_group.delete',
        resourceType: 'pam_signer_group',
      });
    })();
  }

  // ---- organization defaults ----

  defaultsOf(orgId: string): PamOrgDefaults {
    const row = orgConfigOf(this.db).get({ orgId });
    return {
      orgId,
      defaultUnmatchedVerdict: row?.defaultUnmatchedVerdict ?? 'require_approval',
      defaultApprovalDurationMinutes: row?.defaultApprovalDurationMinutes ?? null,
      updatedAt: row?.updatedAt ?? null,
    };
  }

  getConfig(ctx: RequestContext, orgId: string | undefined): PamOrgDefaults {
    return this.defaultsOf(targetOrg(this.db, ctx.caller, orgId).id);
  }

  putConfig(ctx: RequestContext, body: z.infer<typeof PamConfigPutSchema>): PamOrgDefaults {
    const org = targetOrg(this.db, ctx.caller, body.orgId);
    assertWritableScope(this.db, ctx.caller, org.id, null);
    return this.db.$client.transaction(() => {
      const previous = this.defaultsOf(org.id);
      const values = {
        defaultUnmatchedVerdict: body.defaultUnmatchedVerdict,
        defaultApprovalDurationMinutes:
          body.defaultApprovalDurationMinutes !== undefined
            ? body.defaultApprovalDurationMinutes
            : previous.defaultApprovalDurationMinutes,
        updatedBy: ctx.caller.userId,
        updatedAt: nowIso(),
      };
      putConfigOf(this.db).run({ orgId: org.id, ...values });
      recordAudit(this.db, ctx, {
        action: 'pam.config.update',
        resourceType: 'pam_config',
        resourceId: org.id,
        resourceName: liveOrg(this.db, org.id)?.name ?? null,
        orgId: org.id,
        details: {
          previous: {
            defaultUnmatchedVerdict: previous.defaultUnmatchedVerdict,
            defaultApprovalDurationMinutes: previous.defaultApprovalDurationMinutes,
          },
          ...values,
        },
      });
      return this.defaultsOf(org.id);
    })();
  }
}

/** Organization lookups outside the caller's reach (the engine runs for an agent). */
export function liveOrg(db: Db, orgId: string) {
  try {
    return requireOrgRow(db, SYSTEM_CALLER, orgId);
  } catch (err) {
    if (err instanceof DomainError) return null;
    throw err;
  }
}
