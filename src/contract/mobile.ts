import { z } from 'zod';
import { deleteById, getById } from './builders.js';
import { AlertSeveritySchema, alerts } from './alerts.js';
import { IdParamsSchema as IdParams, PageQuerySchema, PaginationSchema, SuccessSchema, TimestampSchema, UuidSchema } from './common.js';
import { DeviceStatusSchema } from './devices.js';
import { endpoint } from './endpoint.js';
import { PAM_DURATION, PAM_REASON_MAX, WebAuthnAssertionSchema } from './pam.js';

export const MobilePlatformSchema = z.enum(['ios', 'android']);
const Text = (max: number) => z.string().trim().min(1).max(max);

/** 05 wire notes "4.6": page and limit as every paged list takes them (limit default 50, max 100, clamped);
 * `cursor` switches to keyset. */
export const MobilePageQuerySchema = PageQuerySchema.extend({
  cursor: z.string().min(1).max(500).optional().describe('Keyset cursor from pagination.nextCursor (base64url JSON {ts,id})'),
});
const MobilePaginationSchema = PaginationSchema.extend({ nextCursor: z.string().nullable() });

/** A page of ITEM as the mobile lists answer: the pagination also carries `nextCursor`. */
function mobilePagedSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), pagination: MobilePaginationSchema });
}

// ---- Registration and settings (02 §2.10) ----

export const PushTokenRegisterSchema = z.strictObject({
  token: Text(4096).describe('The FCM or APNs push token'),
  platform: MobilePlatformSchema.describe('ios or android'),
});
export const PushTokenUnregisterSchema = z.strictObject({ token: Text(4096) });

export const MobileDeviceRegisterSchema = z.strictObject({
  deviceId: Text(255).describe("The app install's own id; registering it again updates the row"),
  platform: MobilePlatformSchema,
  fcmToken: Text(4096).optional().describe('FCM token (required on android)'),
  apnsToken: Text(4096).optional().describe('APNs device token (required on ios)'),
  model: z.string().max(255).optional(),
  osVersion: z.string().max(100).optional(),
  appVersion: z.string().max(100).optional(),
});

const HHMM = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24-hour)');
export const QuietHoursSchema = z.strictObject({
  start: HHMM,
  end: HHMM,
  timezone: z
    .string()
    .max(100)
    .refine((tz) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    }, 'unknown IANA time zone')
    .optional()
    .describe('IANA time zone (default UTC)'),
});

export const MobileSettingsSchema = z.strictObject({
  enabled: z.boolean().optional().describe('Push notifications on or off'),
  severities: z.array(AlertSeveritySchema).max(5).optional().describe('Severities pushed (critical, high, medium, low, info)'),
  quietHours: QuietHoursSchema.nullable().optional().describe('No pushes from start to end (local time), or null'),
});

export const MobileDeviceSchema = z.object({
  id: UuidSchema,
  userId: UuidSchema,
  deviceId: z.string(),
  platform: MobilePlatformSchema,
  model: z.string().nullable(),
  osVersion: z.string().nullable(),
  appVersion: z.string().nullable(),
  fcmToken: z.string().nullable(),
  apnsToken: z.string().nullable(),
  notificationsEnabled: z.boolean(),
  alertSeverities: z.array(AlertSeveritySchema),
  quietHours: z.object({ start: z.string(), end: z.string(), timezone: z.string().optional() }).nullable(),
  lastActiveAt: TimestampSchema.nullable(),
  status: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type MobileDevice = z.infer<typeof MobileDeviceSchema>;

// ---- Inbox, devices, summary ----

export const MobileInboxQuerySchema = MobilePageQuerySchema.extend({
  status: z
    .union([z.enum(['active', 'acknowledged', 'resolved', 'suppressed']), z.array(z.enum(['active', 'acknowledged', 'resolved', 'suppressed']))])
    .optional()
    .describe('Only alerts in these states (repeat or one value)'),
  severity: z.enum(['critical', 'high', 'medium', 'low']).optional().describe('Only alerts of this severity'),
  orgId: UuidSchema.optional(),
});
const DeviceRefSchema = z.object({ id: UuidSchema, hostname: z.string(), osType: z.string(), status: z.string() });
export const MobileInboxAlertSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  status: z.string(),
  severity: AlertSeveritySchema,
  title: z.string(),
  message: z.string(),
  triggeredAt: TimestampSchema,
  acknowledgedAt: TimestampSchema.nullable(),
  resolvedAt: TimestampSchema.nullable(),
  device: DeviceRefSchema.nullable(),
});

export const MobileDeviceListQuerySchema = MobilePageQuerySchema.extend({
  search: z.string().trim().min(1).max(255).optional().describe('Hostname contains this'),
  status: DeviceStatusSchema.optional(),
  orgId: UuidSchema.optional(),
});
export const MobileManagedDeviceSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  siteId: UuidSchema.nullable(),
  hostname: z.string(),
  displayName: z.string().nullable(),
  osType: z.string(),
  status: z.string(),
  lastSeenAt: TimestampSchema.nullable(),
});

export const MobileSummarySchema = z.object({
  devices: z.object({ total: z.number().int(), online: z.number().int(), offline: z.number().int(), maintenance: z.number().int() }),
  alerts: z.object({ total: z.number().int(), active: z.number().int(), acknowledged: z.number().int(), resolved: z.number().int(), critical: z.number().int() }),
});

export const MobileMetricsSchema = z.object({
  deviceId: UuidSchema,
  status: z.string(),
  lastSeenAt: TimestampSchema.nullable(),
  cpuPercent: z.number().nullable(),
  memoryPercent: z.number().nullable(),
  diskPercent: z.number().nullable(),
  recent: z.array(z.object({ metric: z.string(), serviceName: z.string().nullable(), value: z.number().nullable(), textValue: z.string().nullable(), timestamp: z.string() })),
});

// ---- Actions ----

export const MobileActionSchema = z.strictObject({
  action: z.enum(['reboot', 'wake', 'run_script']),
  scriptId: UuidSchema.optional().describe('run_script: the script to run'),
  parameters: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional().describe('run_script: parameter values'),
});
export const MobileActionResultSchema = z.object({
  action: z.enum(['reboot', 'wake', 'run_script']),
  commandId: UuidSchema,
  executionId: UuidSchema.optional(),
  wakeAttemptId: UuidSchema.optional(),
  relay: z.object({ deviceId: UuidSchema, hostname: z.string() }).optional(),
  network: z.string().nullable().optional(),
  broadcast: z.string().optional(),
  macs: z.array(z.string()).optional(),
});

// ---- Approvals (the PAM elevation requests awaiting a decision) ----

export const MobileApprovalSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  deviceId: UuidSchema,
  deviceHostname: z.string().nullable(),
  flowType: z.string(),
  status: z.string(),
  enforcementStatus: z.string().nullable(),
  refusalReason: z.string().nullable(),
  subjectUsername: z.string().nullable(),
  reason: z.string().nullable(),
  targetExecutablePath: z.string().nullable(),
  toolName: z.string().nullable(),
  riskTier: z.number().int().nullable(),
  requestedAt: TimestampSchema,
  decidedAt: TimestampSchema.nullable(),
  expiresAt: TimestampSchema.nullable(),
});
export const MobileApprovalEnvelopeSchema = z.object({ approval: MobileApprovalSchema });
export const MobileApprovalDecideSchema = z.strictObject({
  reason: z.string().max(PAM_REASON_MAX).optional(),
  durationMinutes: z.number().int().min(PAM_DURATION.min).max(PAM_DURATION.max).optional().describe('approve: minutes the elevation lasts'),
  reauthPassword: z.string().min(1).max(1024).optional().describe('Current password (critical-tier approvals)'),
  reauthMfaCode: z.string().min(1).max(32).optional(),
  proof: WebAuthnAssertionSchema.optional().describe('WebAuthn assertion of a registered approver device'),
});
export const MobileApprovalDecisionSchema = MobileApprovalEnvelopeSchema.extend({
  enforcementStatus: z.string().nullable().optional(),
  reason: z.string().optional(),
});

const SESSION = { sessionOnly: true } as const;
const APPROVER = { permission: 'pam:approve', sessionOnly: true } as const;

/** 02 §2.10, §4.6 the mobile interface (prefix /mobile), wire facts of 05 "4.6". */
const approve = endpoint({
  method: 'POST',
  path: '/mobile/approvals/:id/approve',
  params: IdParams,
  body: MobileApprovalDecideSchema,
  responses: { 200: MobileApprovalDecisionSchema },
  auth: { ...APPROVER, mfa: true },
  summary: 'Approve a pending elevation request (a refused approval reads as denied with its reason)',
});

export const mobile = {
  registerToken: endpoint({
    method: 'POST',
    path: '/mobile/notifications/register',
    body: PushTokenRegisterSchema,
    responses: { 200: SuccessSchema },
    auth: SESSION,
    summary: 'Register a push token for the signed-in user',
  }),
  unregisterToken: endpoint({
    method: 'POST',
    path: '/mobile/notifications/unregister',
    body: PushTokenUnregisterSchema,
    responses: { 200: SuccessSchema },
    auth: SESSION,
    summary: "Forget one of the signed-in user's push tokens",
  }),
  registerDevice: endpoint({
    method: 'POST',
    path: '/mobile/devices',
    body: MobileDeviceRegisterSchema,
    responses: { 201: MobileDeviceSchema },
    auth: SESSION,
    summary: 'Register (or update) this phone for push notifications; upsert on deviceId',
  }),
  settings: endpoint({
    method: 'PATCH',
    path: '/mobile/devices/:id/settings',
    params: IdParams,
    body: MobileSettingsSchema,
    responses: { 200: MobileDeviceSchema },
    auth: SESSION,
    summary: "Change a registered phone's push settings: on/off, severities, quiet hours",
  }),
  removeDevice: deleteById('/mobile/devices/:id', SuccessSchema, SESSION, 'Remove a registered phone'),
  inbox: endpoint({
    method: 'GET',
    path: '/mobile/alerts/inbox',
    query: MobileInboxQuerySchema,
    responses: { 200: mobilePagedSchema(MobileInboxAlertSchema) },
    auth: { permission: 'alerts:read' },
    summary: 'Alerts newest first with their device; dismissed (suppressed) excluded unless asked for',
  }),
  // The alert's own acknowledge and resolve (same body, answer and permission) under the mobile path.
  acknowledge: endpoint({ ...alerts.acknowledge, path: '/mobile/alerts/:id/acknowledge' }),
  resolve: endpoint({ ...alerts.resolve, path: '/mobile/alerts/:id/resolve', summary: 'Resolve an alert, with an optional note' }),
  devices: endpoint({
    method: 'GET',
    path: '/mobile/devices',
    query: MobileDeviceListQuerySchema,
    responses: { 200: mobilePagedSchema(MobileManagedDeviceSchema) },
    auth: { permission: 'devices:read' },
    summary: 'Managed devices, last seen first; decommissioned ones only when asked for by status',
  }),
  metrics: endpoint({
    method: 'GET',
    path: '/mobile/devices/:id/metrics',
    params: IdParams,
    responses: { 200: MobileMetricsSchema },
    auth: { permission: 'devices:read' },
    summary: "A managed device's live CPU, memory and disk",
  }),
  action: endpoint({
    method: 'POST',
    path: '/mobile/devices/:id/actions',
    params: IdParams,
    body: MobileActionSchema,
    responses: { 201: MobileActionResultSchema, 202: MobileActionResultSchema },
    auth: { permission: 'devices:execute', mfa: true },
    summary: 'Reboot, wake or run a script on a managed device',
  }),
  summary: endpoint({
    method: 'GET',
    path: '/mobile/summary',
    query: z.object({ orgId: UuidSchema.optional() }),
    responses: { 200: MobileSummarySchema },
    auth: { permission: ['devices:read', 'alerts:read'] },
    summary: 'Device and alert counts',
  }),
  pendingApprovals: endpoint({
    method: 'GET',
    path: '/mobile/approvals/pending',
    query: MobilePageQuerySchema.omit({ page: true }),
    responses: { 200: z.object({ approvals: z.array(MobileApprovalSchema), nextCursor: z.string().nullable() }) },
    auth: APPROVER,
    summary: 'Elevation requests awaiting a decision, newest first',
  }),
  pendingApprovalCount: endpoint({
    method: 'GET',
    path: '/mobile/approvals/pending/count',
    responses: { 200: z.object({ count: z.number().int() }) },
    auth: APPROVER,
    summary: 'How many elevation requests await a decision',
  }),
  approval: getById('/mobile/approvals/:id', MobileApprovalEnvelopeSchema, APPROVER,
    'One elevation request of the approvals inbox'),
  approve,
  // Approve's body, answer and permission: only the decision differs.
  deny: endpoint({ ...approve, path: '/mobile/approvals/:id/deny', summary: 'Deny a pending elevation request' }),
} as const;
