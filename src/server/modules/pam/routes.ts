import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

/** How often the expiry enforcer runs (01 §4.9: "a time-bound expiry enforcer is the safety net"). */
export const EXPIRY_SWEEP_MS = 15_000;

export function registerPamRoutes({ route, services, worker }: ModuleContext): void {
  const p = contract.pam;
  const { rules, requests, approvers, exports, ingest, jit, decisions, expiry } = services.pam;

  route(p.listRules, ({ ctx, query }) => ({ success: true as const, rules: rules.listRules(ctx, query) }));
  route(p.createRule, ({ ctx, body }) => ({ success: true as const, rule: rules.createRule(ctx, body) }));
  route(p.previewRule, ({ ctx, body }) => rules.preview(ctx, body));
  route(p.getRule, ({ ctx, params }) => ({ success: true as const, rule: rules.getRule(ctx, params.id) }));
  route(p.updateRule, ({ ctx, params, body }) => ({
    success: true as const,
    rule: rules.updateRule(ctx, params.id, body),
  }));
  route(p.deleteRule, ({ ctx, params }) => {
    rules.deleteRule(ctx, params.id);
    return { success: true as const };
  });

  route(p.listSignerGroups, ({ ctx, query }) => ({
    success: true as const,
    signerGroups: rules.listSignerGroups(ctx, query.orgId),
  }));
  route(p.createSignerGroup, ({ ctx, body }) => ({
    success: true as const,
    signerGroup: rules.createSignerGroup(ctx, body),
  }));
  route(p.getSignerGroup, ({ ctx, params }) => ({
    success: true as const,
    signerGroup: rules.getSignerGroup(ctx, params.id),
  }));
  route(p.updateSignerGroup, ({ ctx, params, body }) => ({
    success: true as const,
    signerGroup: rules.updateSignerGroup(ctx, params.id, body),
  }));
  route(p.deleteSignerGroup, ({ ctx, params }) => {
    rules.deleteSignerGroup(ctx, params.id);
    return { success: true as const };
  });

  route(p.getConfig, ({ ctx, query }) => ({ success: true as const, config: rules.getConfig(ctx, query.orgId) }));
  route(p.putConfig, ({ ctx, body }) => ({ success: true as const, config: rules.putConfig(ctx, body) }));

  route(p.ingest, ({ ctx, params, body, reply }) => {
    const outcome = ingest.ingest(ctx, params.agentId, body);
    if (!outcome.created) return { id: null, status: 'ignored' as const };
    void reply.code(201);
    const { created: _created, ...answer } = outcome;
    return answer;
  });
  route(p.requestJit, ({ ctx, body }) => ({ success: true as const, request: jit.requestJit(ctx, body) }));
  route(p.listRequests, ({ ctx, query }) => requests.list(ctx, query));
  route(p.getRequest, ({ ctx, params }) => ({ success: true as const, request: requests.get(ctx, params.id) }));
  route(p.listActive, ({ ctx, query }) => ({ success: true as const, active: requests.active(ctx, query) }));
  route(p.assertionChallenge, async ({ ctx, params }) => {
    const request = requests.pendingForChallenge(ctx, params.id);
    return { options: await approvers.assertionOptions(ctx, request.id) };
  });
  route(p.respond, ({ ctx, params, body }) => decisions.respond(ctx, params.id, body));
  route(p.revoke, ({ ctx, params, body }) => decisions.revoke(ctx, params.id, body.reason));

  route(p.approverRegistrationOptions, async ({ ctx }) => ({ options: await approvers.registrationOptions(ctx) }));
  route(p.registerApproverDevice, async ({ ctx, body }) => ({
    success: true as const,
    device: await approvers.register(ctx, body),
  }));
  route(p.listApproverDevices, ({ ctx }) => ({ success: true as const, devices: approvers.listDevices(ctx) }));
  route(p.deleteApproverDevice, ({ ctx, params }) => {
    approvers.deleteDevice(ctx, params.id);
    return { success: true as const };
  });

  route(p.exportAudit, ({ ctx, query, reply }) => {
    const page = exports.page(ctx, query);
    void reply.headers(page.headers).header('content-type', page.contentType);
    void reply.send(page.body);
    return undefined;
  });

  // Runs at start (a periodic job is due at once), so elevations that expired while the server was down end too.
  worker.every('pam.expire-elevations', EXPIRY_SWEEP_MS, (_payload, job) => {
    expiry.expireDue(new Date(Math.max(Date.now(), Date.parse(job.runAt))));
  });
}
