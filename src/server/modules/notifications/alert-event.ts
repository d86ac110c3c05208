import { z } from 'zod';
import type { AlertEventFields } from '../alerts/alerts-service.js';

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

/** The payload of every alert.* event (ALERT-EVENTS.md) as a subscriber reads it: the fields the alerts module
 * publishes, with the status as any string. A type, not an interface: it is stored as a JSON record. */
export type AlertEventPayload = Omit<AlertEventFields, 'status' | 'severity'> & { status: string; severity: (typeof SEVERITIES)[number] };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isPlain = (value: unknown): value is Record<string, unknown> => {
  if (!isRecord(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};
const str = (value: unknown, fallback: string): string => (typeof value === 'string' ? value : fallback);
const strOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const isSeverity = (value: unknown): value is AlertEventPayload['severity'] =>
  typeof value === 'string' && (SEVERITIES as readonly string[]).includes(value);

/**
 * Reads an alert event payload at the boundary (the events come from another module through the outbox), by hand
 * rather than through a zod object with a `.catch()` per field: those build a zod error for every missing or
 * mistyped optional field, on every event of the notification pipeline and of mobile push (issue 12). alertId and
 * orgId are required (non-empty strings): without them, undefined. Every other field that is missing or of the
 * wrong type gets its fallback; unknown fields are dropped. Same result as the zod schema it replaces
 * (test/server/alert-event.test.ts compares them).
 */
export function readAlertEvent(input: unknown): AlertEventPayload | undefined {
  if (!isRecord(input)) return undefined;
  const { alertId, orgId } = input;
  if (typeof alertId !== 'string' || alertId.length === 0 || typeof orgId !== 'string' || orgId.length === 0) return undefined;
  const ids = input.notificationChannelIds;
  return {
    alertId,
    orgId,
    orgName: str(input.orgName, ''),
    ruleId: strOrNull(input.ruleId),
    ruleName: strOrNull(input.ruleName),
    templateId: strOrNull(input.templateId),
    deviceId: strOrNull(input.deviceId),
    deviceName: strOrNull(input.deviceName),
    severity: isSeverity(input.severity) ? input.severity : 'info',
    status: str(input.status, 'active'),
    title: str(input.title, 'Alert'),
    message: str(input.message, ''),
    context: isPlain(input.context) ? { ...input.context } : {},
    triggeredAt: str(input.triggeredAt, new Date().toISOString()),
    notificationChannelIds: Array.isArray(ids) && ids.every((id) => typeof id === 'string') ? [...ids] : null,
    escalationPolicyId: strOrNull(input.escalationPolicyId),
    actorUserId: strOrNull(input.actorUserId),
  };
}

/** readAlertEvent as a zod schema, for callers that parse with zod: an issue only when alertId or orgId is missing. */
export const AlertEventPayloadSchema = z.unknown().transform((input, ctx): AlertEventPayload => {
  const alert = readAlertEvent(input);
  if (alert) return alert;
  ctx.addIssue({ code: 'custom', message: 'An alert event needs alertId and orgId (non-empty strings)' });
  return z.NEVER;
});

/** readAlertEvent, throwing when the payload is not an alert event (a job's failure). */
export function parseAlertEvent(input: unknown): AlertEventPayload {
  const alert = readAlertEvent(input);
  if (!alert) throw new Error('Not an alert event: alertId and orgId (non-empty strings) are required');
  return alert;
}

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
