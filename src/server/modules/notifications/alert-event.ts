import { z } from 'zod';

/** The payload of every alert.* event (ALERT-EVENTS.md), parsed at the boundary: the events come from another
 * module through the outbox. */
export const AlertEventPayloadSchema = z.object({
  alertId: z.string().min(1),
  orgId: z.string().min(1),
  orgName: z.string().catch(''),
  ruleId: z.string().nullable().catch(null),
  ruleName: z.string().nullable().catch(null),
  templateId: z.string().nullable().catch(null),
  deviceId: z.string().nullable().catch(null),
  deviceName: z.string().nullable().catch(null),
  severity: z.enum(['critical', 'high', 'medium', 'low', 'info']).catch('info'),
  status: z.string().catch('active'),
  title: z.string().catch('Alert'),
  message: z.string().catch(''),
  context: z.record(z.string(), z.unknown()).catch({}),
  triggeredAt: z.string().catch(() => new Date().toISOString()),
  notificationChannelIds: z.array(z.string()).nullable().catch(null),
  escalationPolicyId: z.string().nullable().catch(null),
  actorUserId: z.string().nullable().catch(null),
});
export type AlertEventPayload = z.infer<typeof AlertEventPayloadSchema>;

export type Severity = AlertEventPayload['severity'];

/** 02 §2.5: priority from alert severity. */
export const PRIORITY_OF: Record<Severity, 'urgent' | 'high' | 'normal' | 'low'> = {
  critical: 'urgent',
  high: 'high',
  medium: 'normal',
  low: 'low',
  info: 'low',
};

/** 02 §2.4: incident severity when the channel sets none. */
export const INCIDENT_SEVERITY_OF: Record<Severity, 'critical' | 'error' | 'warning' | 'info'> = {
  critical: 'critical',
  high: 'error',
  medium: 'warning',
  low: 'info',
  info: 'info',
};
