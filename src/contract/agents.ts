import { z } from 'zod';
import { IdParamsSchema, JsonObjectSchema, UuidSchema, successWith } from './common.js';
import { DEVICE_ROLES, OsTypeSchema } from './devices.js';
import { endpoint } from './endpoint.js';

/** `svc_` followed by 64 hex characters: the agent's bearer token, returned once at enrollment. */
export const AGENT_TOKEN_PATTERN = /^svc_[0-9a-f]{64}$/;

const Text = (max: number) => z.string().trim().min(1).max(max);

export const AgentEnrollSchema = z.object({
  enrollmentKey: z.string().min(1).max(256).describe('The enrollment key (64 hex characters)'),
  hostname: Text(255).describe('Host name of the device'),
  osType: OsTypeSchema.describe('Operating system family'),
  osVersion: Text(255).describe('Operating system version'),
  architecture: Text(50).describe('CPU architecture, e.g. x86_64 or arm64'),
  agentVersion: Text(50).describe('Version of the agent'),
  displayName: Text(255).optional().describe('Display name; defaults to the host name'),
  lastUser: z.string().max(255).optional().describe('The last signed-in user'),
  hardwareInfo: JsonObjectSchema.optional().describe('Hardware inventory'),
  networkInfo: z.array(JsonObjectSchema).max(100).optional().describe('Network interfaces'),
});

export const AgentConfigSchema = z.object({
  heartbeatIntervalSeconds: z.number().int(),
  metricsCollectionIntervalSeconds: z.number().int(),
});

export const AgentEnrollResponseSchema = z.object({
  agentId: z.string(),
  deviceId: UuidSchema,
  authToken: z.string().describe('Bearer token for /agents/:id/* (svc_ + 64 hex); not shown again'),
  orgId: UuidSchema,
  siteId: UuidSchema.nullable(),
  config: AgentConfigSchema,
});

/** The agent's own health words (issue 15 item 10): each means "alive", the device is online. */
export const AGENT_HEALTH = ['ok', 'warning', 'error'] as const;

/** Sent on `POST /agents/enroll` with the agent's current bearer token to re-enrol its device in place. */
export const REENROLLMENT_HEADER = 'x-agent-reenrollment-token';

const Str = z.string().trim().max(255);
const Amount = z.number().finite().min(0).max(1e12);

/** Hardware inventory (issue 13): the named fields feed the `hardware.*` filter fields; others are kept as sent. */
export const HardwareInventorySchema = z
  .object({
    manufacturer: Str.optional(),
    model: Str.optional(),
    serialNumber: Str.optional(),
    cpuModel: Str.optional(),
    gpuModel: Str.optional(),
    cpuCores: z.number().int().min(0).max(100_000).optional(),
    ramTotalMb: Amount.optional(),
    diskTotalGb: Amount.optional(),
  })
  .loose();

/** One network interface; the first with an ipAddress is the device's primary one (`network.*` filter fields). */
export const NetworkInterfaceSchema = z
  .object({
    name: Str.optional(),
    ipAddress: Str.optional(),
    macAddress: Str.optional(),
    publicIp: Str.optional(),
  })
  .loose();

export const WATCHDOG_STATUSES = ['connected', 'failover', 'offline'] as const;

/** The inventory an agent reports on each heartbeat (05 wire notes "4.5" field list); every field optional, an
 * omitted one keeps its stored value. */
export const AgentInventorySchema = z.object({
  osVersion: Text(255).optional().describe('Operating system version'),
  osBuild: Str.optional().describe('Operating system build'),
  architecture: Text(50).optional().describe('CPU architecture: x64, x86 or arm64'),
  uptimeSeconds: z.number().int().min(0).max(1e10).optional().describe('Seconds since boot'),
  isHeadless: z.boolean().optional().describe('No display attached'),
  deviceRole: z.enum(DEVICE_ROLES).optional().describe('What the device is'),
  watchdogStatus: z.enum(WATCHDOG_STATUSES).optional().describe("The agent watchdog's state"),
  hardwareInfo: HardwareInventorySchema.optional().describe('Hardware inventory'),
  networkInfo: z.array(NetworkInterfaceSchema).max(100).optional().describe('Network interfaces'),
  software: z
    .array(
      z
        .object({
          name: Str.min(1),
          version: Str.optional(),
          vendor: Str.optional(),
          installDate: z.string().trim().max(64).optional().describe('When it was installed, as the OS reports it'),
          installLocation: z.string().max(1024).optional(),
          uninstallString: z.string().max(2048).optional().describe('The command the OS would run to uninstall it'),
        })
        .loose(),
    )
    .max(10_000)
    .optional()
    .describe('Installed software (names feed software.installed; the list replaces the device software inventory)'),
  pendingPatchCount: z.number().int().min(0).max(100_000).optional().describe('Patches pending installation'),
  rebootRequired: z.boolean().optional().describe('A reboot is pending'),
});

/** What an agent may report about itself; administrative states (quarantined, decommissioned) are not its to set. */
export const AgentHeartbeatSchema = AgentInventorySchema.extend({
  status: z
    .enum(['online', 'maintenance', 'updating', ...AGENT_HEALTH])
    .optional()
    .describe('Reported state (default online); the agent health words ok, warning and error mean online'),
  agentVersion: Text(50).optional().describe('Version of the agent, when it changed'),
  lastUser: z.string().max(255).optional().describe('The signed-in user'),
  metrics: JsonObjectSchema.optional().describe('Current metrics (cpuPercent, ramPercent, diskPercent feed metrics.*)'),
});

export const AgentHeartbeatResponseSchema = successWith({ config: AgentConfigSchema });

/** The agent's `:id`. */
const AgentParams = IdParamsSchema;

/** The agent's own endpoints: enrollment with a key (no user auth), then its bearer token (01 §5.13). */
export const agents = {
  enroll: endpoint({
    method: 'POST',
    path: '/agents/enroll',
    body: AgentEnrollSchema,
    responses: { 201: AgentEnrollResponseSchema },
    auth: { public: true },
    summary:
      'Enroll a device with an enrollment key; answers the agent id and its token. With the header ' +
      'x-agent-reenrollment-token set to its current token, the agent re-enrols its own device in place',
  }),
  heartbeat: endpoint({
    method: 'POST',
    path: '/agents/:id/heartbeat',
    params: AgentParams,
    body: AgentHeartbeatSchema,
    responses: { 200: AgentHeartbeatResponseSchema },
    auth: { agent: true },
    summary: 'Report that the agent is alive; answers its configuration',
  }),
} as const;
