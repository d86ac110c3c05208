import { z } from 'zod';
import type { Db } from '../../db/connection.js';
import type { JobWorker } from '../../jobs/queue.js';
import { WEBHOOK_FAILED_EVENT } from '../webhooks/delivery.js';
import type { InboxService } from './inbox.js';

const JOB = 'notify.webhook-failed';

/** Who may set a webhook active again: the webhook routes' write permission (02 §4.3). */
const WEBHOOK_ADMIN_PERMISSION = 'organizations:write';

const WebhookFailedSchema = z.object({
  eventId: z.string(),
  webhookId: z.string(),
  webhookName: z.string(),
  orgId: z.string(),
  failedDeliveries: z.number(),
});

/**
 * Issue 12: when the system sets a webhook to `failed`, the organization's admins (the users who reach it and may
 * set the webhook active again) get an in-app notification. One per user and event, so a replayed job notifies
 * nobody twice.
 */
export function registerWebhookFailureNotices(
  worker: JobWorker,
  db: Db,
  deps: { inbox: InboxService; recipientsOf: (orgId: string, permission: string) => string[]; publicUrl: string | undefined },
): void {
  worker.subscribe(WEBHOOK_FAILED_EVENT, JOB);
  worker.handle(JOB, (payload) => {
    const event = WebhookFailedSchema.parse(payload);
    const link = `${(deps.publicUrl ?? '').replace(/\/+$/, '')}/webhooks/${event.webhookId}`.slice(0, 500);
    const rows = deps.recipientsOf(event.orgId, WEBHOOK_ADMIN_PERMISSION).map((userId) => ({
      userId,
      orgId: event.orgId,
      type: 'system' as const,
      priority: 'high' as const,
      title: `Webhook "${event.webhookName}" was set to failed`.slice(0, 255),
      message: `Its last ${event.failedDeliveries} deliveries within 24 hours all failed, so it gets no more deliveries. Fix the receiver, then set it active again (svc webhooks update ${event.webhookId} --status active).`,
      link,
      metadata: { webhookId: event.webhookId, failedDeliveries: event.failedDeliveries },
      sourceKey: `webhook-failed:${event.eventId}`,
    }));
    db.$client.transaction(() => deps.inbox.deliver(db, rows))();
  });
}
