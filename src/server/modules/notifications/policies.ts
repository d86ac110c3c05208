import { and, desc, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  EscalationPolicyCreateSchema,
  EscalationPolicyListQuerySchema,
  EscalationPolicyUpdateSchema,
} from '../../../contract/alert-channels.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { deleteById, inJson, insertRow, rowById, shapeConditions, updateRow } from '../../db/prepared.js';
import { escalationPolicies, type EscalationStep } from '../../db/schema/index.js';
import { badRequest, fieldError, notFound } from '../../errors.js';
import { paged, preparedPages } from '../../lib/paging.js';
import { visibleOr404 } from '../shared/visible.js';
import type { TenancyService } from '../tenancy/service.js';
import type { ChannelsService } from './channels.js';
import { auditOrgRow, listOrgReach } from './org-scope.js';
import { resolveWriteOrg } from '../tenancy/access.js';

export type PolicyRow = typeof escalationPolicies.$inferSelect;
type StepInput = z.infer<typeof EscalationPolicyCreateSchema>['steps'];

const NOT_FOUND = 'Escalation policy not found';

/** The steps a dispatcher can act on: those with a whole delayMinutes and an array of channel ids. */
export function stepsOf(policy: PolicyRow): EscalationStep[] {
  const out: EscalationStep[] = [];
  for (const step of policy.steps) {
    const { delayMinutes, channelIds } = step;
    if (typeof delayMinutes !== 'number' || !Array.isArray(channelIds)) continue;
    out.push({ delayMinutes, channelIds: channelIds.filter((c): c is string => typeof c === 'string') });
  }
  return out;
}

/** A policy by id only if it is of the organization (the dispatcher, and the alerts module checking a rule's
 * escalationPolicyId, as it is built without this module's services); else null. */
export function policyOfOrg(db: Db, orgId: string, id: string): PolicyRow | null {
  const row = rowById(db, escalationPolicies, id);
  return row && row.orgId === orgId ? row : null;
}

/** A page of policies, most recently updated first; shape 'o': of the organizations of the JSON array `orgIds`
 * (org-scope.ts listOrgReach). */
const policyPageOf = preparedPages(escalationPolicies, [desc(escalationPolicies.updatedAt), sql`rowid DESC`], (shape) =>
  and(...shapeConditions(shape, { o: () => inJson(escalationPolicies.orgId, 'orgIds') })),
);

/** 02 §2.6 and 05-wire-notes 4.1 `/alerts/policies`. */
export class PoliciesService {
  constructor(
    private readonly db: Db,
    private readonly tenancy: TenancyService,
    private readonly channels: ChannelsService,
  ) {}

  list(ctx: RequestContext, query: z.infer<typeof EscalationPolicyListQuerySchema>) {
    const reach = listOrgReach(this.tenancy, ctx, query.orgId);
    if (reach === null) return paged<PolicyRow>([], query, 0);
    const { rows, total } = policyPageOf(this.db, reach.shape, { orgIds: reach.orgIds }, query);
    return paged(rows, query, total);
  }

  get(ctx: RequestContext, id: string): PolicyRow {
    return this.findVisible(ctx, id);
  }

  /** A policy by id for the dispatcher: only one of the alert's own organization. */
  forOrg(orgId: string, id: string): PolicyRow | null {
    return policyOfOrg(this.db, orgId, id);
  }

  /** Every channel a step names must be a channel of the policy's organization. */
  private assertSteps(orgId: string, steps: StepInput): void {
    const named = [...new Set(steps.flatMap((s) => s.channelIds))];
    const known = this.channels.idsOfOrg(orgId, named);
    const unknown = named.filter((id) => !known.has(id));
    if (unknown.length > 0) throw fieldError('steps', `Unknown notification channel(s) of this organization: ${unknown.join(', ')}`);
  }

  create(ctx: RequestContext, body: z.infer<typeof EscalationPolicyCreateSchema>): PolicyRow {
    const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
    this.assertSteps(org.id, body.steps);
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, escalationPolicies, { orgId: org.id, name: body.name, steps: body.steps });
      this.audit(ctx, 'escalation_policy.create', row, { steps: row.steps.length });
      return row;
    })();
  }

  update(ctx: RequestContext, id: string, body: z.infer<typeof EscalationPolicyUpdateSchema>): PolicyRow {
    if (body.name === undefined && body.steps === undefined) throw badRequest('No updates provided', 'NO_UPDATES');
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      if (body.steps) this.assertSteps(current.orgId, body.steps);
      const row = updateRow(this.db, escalationPolicies, current, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.steps !== undefined ? { steps: body.steps } : {}),
        updatedAt: new Date().toISOString(),
      });
      if (!row) throw notFound(NOT_FOUND, 'ESCALATION_POLICY_NOT_FOUND');
      this.audit(ctx, 'escalation_policy.update', row, { changed: Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined) });
      return row;
    })();
  }

  delete(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const row = this.findVisible(ctx, id);
      deleteById(this.db, escalationPolicies, id);
      this.audit(ctx, 'escalation_policy.delete', row, {});
      return { success: true as const };
    })();
  }

  private findVisible(ctx: RequestContext, id: string): PolicyRow {
    const row = rowById(this.db, escalationPolicies, id);
    return visibleOr404(row, (r) => this.tenancy.requireOrg(ctx, r.orgId), () => notFound(NOT_FOUND, 'ESCALATION_POLICY_NOT_FOUND'));
  }

  private audit(ctx: RequestContext, action: string, row: PolicyRow, details: Record<string, unknown>): void {
    auditOrgRow(this.db, this.tenancy, ctx, row, { action, resourceType: 'escalation_policy', details });
  }
}
