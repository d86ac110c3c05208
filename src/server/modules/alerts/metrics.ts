import type { Statement } from 'better-sqlite3';
import type { z } from 'zod';
import type { AgentMetricsSchema } from '../../../contract/alerts.js';
import type { Db } from '../../db/connection.js';
import type { RequestContext } from '../../context.js';
import { badRequest, notFound } from '../../errors.js';
import type { DevicesService } from '../devices/service.js';
import { enqueueJob } from '../../jobs/queue.js';
import { EVALUATE_RECENT_JOB, RETENTION_MS } from './evaluator.js';

/** A sample may be stamped at most this far in the future (clock skew). */
const MAX_FUTURE_MS = 5 * 60_000;

/** Metric samples reported by agents (api-notes "Agent metrics"), stored for the evaluator. */
export class MetricsIngest {
  private readonly insert: Statement<[string, string, string, string, number | null, string | null, number]>;

  constructor(
    private readonly db: Db,
    private readonly devices: DevicesService,
  ) {
    this.insert = db.$client.prepare(
      'INSERT INTO alert_metric_samples (device_id, org_id, metric, service_name, value, text_value, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
  }

  /** Stores one batch in one transaction: all samples or none. */
  report(ctx: RequestContext, agentId: string, body: z.infer<typeof AgentMetricsSchema>, now = Date.now()): { accepted: number } {
    const device = this.devices.byAgentId(agentId);
    if (!device || device.status === 'decommissioned' || ctx.caller.agentId !== agentId) throw notFound('Agent not found', 'AGENT_NOT_FOUND');
    const base = body.timestamp !== undefined ? Date.parse(body.timestamp) : now;
    const rows = body.samples.map((s, i) => {
      const at = s.timestamp !== undefined ? Date.parse(s.timestamp) : base;
      if (at > now + MAX_FUTURE_MS) throw badRequest(`samples.${i}.timestamp: is in the future`, 'INVALID_SAMPLE_TIME');
      if (at < now - RETENTION_MS) throw badRequest(`samples.${i}.timestamp: is older than the retention (24 h)`, 'INVALID_SAMPLE_TIME');
      const value = typeof s.value === 'number' ? s.value : null;
      return [device.id, device.orgId, s.metric, s.serviceName ?? '', value, value === null ? String(s.value) : null, at] as const;
    });
    this.db.$client.transaction(() => {
      for (const row of rows) this.insert.run(...row);
      // The samples and the job that evaluates them commit together; a job still waiting takes these samples too.
      enqueueJob(this.db, EVALUATE_RECENT_JOB, {}, { uniqueKey: EVALUATE_RECENT_JOB, maxAttempts: 3 });
    })();
    return { accepted: rows.length };
  }
}
