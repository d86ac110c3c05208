import net from 'node:net';
import path from 'node:path';
import envPaths from 'env-paths';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const TRUTHY = ['1', 'true', 'yes', 'on'];
const FALSY = ['0', 'false', 'no', 'off'];

/** 01 §5.8: truthy 1, true, yes, on; falsy 0, false, no, off. */
const flag = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const v = value.trim().toLowerCase();
      if (TRUTHY.includes(v)) return true;
      if (FALSY.includes(v)) return false;
      ctx.addIssue({ code: 'custom', message: `expected one of ${[...TRUTHY, ...FALSY].join(', ')}` });
      return z.NEVER;
    });

const int = (fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const n = Number(value);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected a whole number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

const HOST_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Why `host` cannot be listened on, or undefined: an IP address, or a host name whose last label is not all
 * digits (so `0.0.0.0.0` and `999.1.1.1` are refused here rather than sent to the resolver). */
export function hostProblem(host: string): string | undefined {
  if (net.isIP(host) !== 0) return undefined;
  const labels = host.replace(/\.$/, '').split('.');
  const valid =
    host.length <= 253 && labels.every((label) => HOST_LABEL.test(label)) && !/^\d+$/.test(labels.at(-1) ?? '');
  return valid
    ? undefined
    : `expected an IP address or a host name, such as 127.0.0.1, 0.0.0.0, ::1 or localhost (got ${JSON.stringify(host)})`;
}

/** A comma-separated setting's entries, trimmed, without empty ones. */
function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The log file when none is given: JSON lines in the data dir, so a server started in the background of a
 * shell does not write over what the shell's commands print. */
export const LOG_FILE = 'server.log';

/** Every setting the server reads from its environment, by the variable's own name. */
const LogLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

const EnvSchema = z.object({
  SVC_DATA_DIR: optionalString,
  HOST: optionalString.superRefine((value, ctx) => {
    const problem = value === undefined ? undefined : hostProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  PORT: int(3000, 0, 65535),
  SVC_LOG_LEVEL: LogLevelSchema.optional().default('info'),
  SVC_LOG_FILE: optionalString,
  SVC_PUBLIC_URL: z.url().optional(),
  // The users contract's own rule (z.email, at most 255): an address it would refuse could never be edited.
  SVC_ADMIN_EMAIL: z.email('must be an e-mail address the API accepts, such as admin@example.com').max(255).optional(),
  SVC_ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  SVC_JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  SVC_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional(),
  SVC_ENROLLMENT_PEPPER: z.string().min(32, 'must be at least 32 characters').optional(),
  ENABLE_2FA: flag(true),
  ENABLE_REGISTRATION: flag(true),
  SVC_TRUSTED_PROXIES: optionalString,
  SVC_BODY_LIMIT_BYTES: int(1_048_576, 1024, 104_857_600),
  SVC_ACCESS_TOKEN_TTL_SECONDS: int(900, 30, 86_400),
  SVC_REFRESH_TOKEN_TTL_SECONDS: int(30 * 86_400, 300, 365 * 86_400),
  SVC_COOKIE_SECURE: flag(false),
  SVC_LOGIN_IP_LIMIT: int(10, 1, 1_000_000),
  SVC_LOGIN_EMAIL_LIMIT: int(5, 1, 1_000_000),
  SVC_LOGIN_WINDOW_SECONDS: int(300, 1, 86_400),
  SVC_LOGIN_LOCKOUT_FAILURES: int(5, 1, 1_000_000),
  SVC_LOGIN_LOCKOUT_SECONDS: int(900, 1, 86_400),
  SVC_MFA_LIMIT: int(5, 1, 1_000_000),
  SVC_MFA_WINDOW_SECONDS: int(300, 1, 86_400),
  SVC_REGISTER_LIMIT: int(5, 1, 1_000_000),
  SVC_REGISTER_PARTNER_LIMIT: int(3, 1, 1_000_000),
  SVC_REGISTER_WINDOW_SECONDS: int(3600, 1, 86_400),
  SVC_JOB_POLL_MS: int(1000, 10, 60_000),
  SVC_ENROLLMENT_KEY_TTL_MINUTES: int(60, 1, 525_600),
  SVC_SHUTDOWN_TIMEOUT_MS: int(10_000, 100, 600_000),
  SVC_SMTP_URL: optionalString.refine((v) => v === undefined || /^smtps?:\/\/\S+$/.test(v), 'must be an smtp:// or smtps:// URL'),
  SVC_SMTP_FROM: z.string().min(3).optional().default('svc <no-reply@localhost>'),
  SVC_SMTP_TIMEOUT_MS: int(10_000, 100, 120_000),
  SVC_SMS_URL: optionalString.refine((v) => v === undefined || /^https?:\/\/\S+$/.test(v), 'must be an http:// or https:// URL'),
  SVC_SMS_TOKEN: optionalString,
  SVC_SMS_TIMEOUT_MS: int(10_000, 100, 120_000),
  SVC_SMS_CODE_TTL_SECONDS: int(600, 30, 86_400),
  SVC_SMS_CODE_ATTEMPTS: int(5, 1, 100),
  SVC_SMS_SEND_LIMIT: int(5, 1, 1_000_000),
  SVC_SMS_SEND_WINDOW_SECONDS: int(900, 1, 86_400),
  SVC_INVITE_TTL_HOURS: int(72, 1, 8760),
  SVC_PASSWORD_RESET_TTL_MINUTES: int(60, 1, 10_080),
  SVC_PASSWORD_RESET_LIMIT: int(5, 1, 1_000_000),
  SVC_PASSWORD_RESET_WINDOW_SECONDS: int(3600, 1, 86_400),
  SVC_EXPORT_SETTLE_SECONDS: int(300, 0, 86_400),
  SVC_OUTBOUND_ALLOW: optionalString.superRefine((value, ctx) => {
    const bad = splitList(value).filter((cidr) => !ipaddr.isValidCIDR(cidr));
    if (bad.length) ctx.addIssue({ code: 'custom', message: `expected comma-separated CIDRs such as 127.0.0.1/32,::1/128 (not CIDRs: ${bad.join(', ')})` });
  }),
  SVC_WEBHOOK_TIME_SCALE: optionalString.refine((v) => v === undefined || (Number(v) > 0 && Number(v) <= 1), 'must be a number above 0 and at most 1'),
  SVC_ALERT_TIME_SCALE: optionalString.refine((v) => v === undefined || (Number(v) > 0 && Number(v) <= 1), 'must be a number above 0 and at most 1'),
  SVC_PAGERDUTY_EVENTS_URL: z.url().optional().default('https://events.pagerduty.com/v2/enqueue'),
  SVC_TWILIO_API_URL: z.url().optional().default('https://api.twilio.com'),
  SVC_TWILIO_ACCOUNT_SID: optionalString,
  SVC_TWILIO_AUTH_TOKEN: optionalString,
  SVC_TWILIO_FROM: optionalString.refine((v) => v === undefined || /^\+[1-9]\d{1,14}$/.test(v), 'must be an E.164 number such as +15551234567'),
  // Mobile push (02 §2.10): without these, pushes are recorded as `stubbed` (air-gapped default).
  SVC_FCM_PROJECT_ID: optionalString,
  SVC_FCM_SERVICE_ACCOUNT_FILE: optionalString,
  SVC_FCM_API_URL: z.url().optional().default('https://fcm.googleapis.com'),
  SVC_FCM_TOKEN_URL: z.url().optional(),
  SVC_APNS_KEY_FILE: optionalString,
  SVC_APNS_KEY_ID: optionalString,
  SVC_APNS_TEAM_ID: optionalString,
  SVC_APNS_TOPIC: optionalString,
  SVC_APNS_URL: z.url().optional().default('https://api.push.apple.com'),
  SVC_WEBAUTHN_RP_ID: optionalString,
  SVC_WEBAUTHN_ORIGIN: optionalString.refine((v) => v === undefined || v.split(',').every((o) => /^https?:\/\/[^/\s]+$/.test(o.trim())), 'must be comma-separated origins such as https://admin.example.com'),
});

export interface ServerConfig {
  dataDir: string;
  databaseFile: string;
  host: string;
  port: number;
  logLevel: z.infer<typeof LogLevelSchema>;
  /** Where the request log goes: a file (default `<dataDir>/server.log`), or null for stderr (`-`). */
  logFile: string | null;
  publicUrl: string | undefined;
  admin: { email: string | undefined; password: string | undefined };
  secrets: { jwtSecret?: string; encryptionKey?: string; enrollmentPepper?: string };
  features: { mfa: boolean; registration: boolean };
  trustedProxies: string[];
  bodyLimitBytes: number;
  tokens: { accessTtlSeconds: number; refreshTtlSeconds: number; cookieSecure: boolean };
  throttle: {
    loginPerIp: number;
    loginPerEmail: number;
    loginWindowSeconds: number;
    lockoutFailures: number;
    lockoutSeconds: number;
    mfaAttempts: number;
    mfaWindowSeconds: number;
    registerPerIp: number;
    registerPartnerPerIp: number;
    registerWindowSeconds: number;
  };
  jobs: { pollMs: number };
  /** 01 §8: the default lifetime of an enrollment key. */
  enrollment: { keyTtlMinutes: number };
  shutdownTimeoutMs: number;
  /** Outgoing e-mail (invitations, password resets); without smtpUrl no mail is sent. */
  mail: { smtpUrl: string | undefined; from: string; timeoutMs: number };
  /** The SMS gateway: POST JSON `{to, body}` to url with an optional bearer token (01 §4.5, §5.7). */
  sms: { url: string | undefined; token: string | undefined; timeoutMs: number; codeTtlSeconds: number; codeAttempts: number };
  /** Lifetimes of the single-use links sent by e-mail (01 §8: a reset link lasts an hour). */
  links: { inviteTtlHours: number; passwordResetTtlMinutes: number };
  /** Sending limits: SMS codes per user, password-reset requests per client IP. */
  delivery: { smsPerUser: number; smsWindowSeconds: number; passwordResetPerIp: number; passwordResetWindowSeconds: number };
  /** Privileged elevation: how long the audit export withholds the newest rows (01 §4.9 X-Settled-Through), and
   * the WebAuthn relying party of approver devices (default: the public URL's host and origin, else localhost). */
  pam: { exportSettleSeconds: number; webauthnRpId: string; webauthnOrigins: string[] };
  /** Outgoing requests to URLs that callers give (webhooks, SSO, alert channels): CIDRs let through the
   * private-address guard (security/url-safety.ts); empty by default, a warning at start when set. */
  outbound: { allow: string[] };
  /** Outgoing webhooks: retry delays are multiplied by timeScale (1 in production; tests shrink the schedule). */
  webhooks: { timeScale: number };
  /** Alert escalation: step delays (delayMinutes) are multiplied by timeScale (1 in production; tests shrink them). */
  alerts: { timeScale: number };
  /** Alert channel providers (02 §2.4): the incident events API and the Twilio Programmable Messaging API. The
   * base URLs are settings so tests (and proxies) can point them elsewhere. */
  alerting: {
    pagerdutyEventsUrl: string;
    twilio: { apiUrl: string; accountSid: string | undefined; authToken: string | undefined; from: string | undefined };
  };
  mobilePush: MobilePushConfig;
}

/** Mobile push providers (02 §2.10); a provider is configured only when all its settings are given. */
export interface MobilePushConfig {
  fcm: { projectId: string; serviceAccountFile: string; apiUrl: string; tokenUrl: string | undefined } | undefined;
  apns: { keyFile: string; keyId: string; teamId: string; topic: string; url: string } | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface ConfigOverrides {
  dataDir?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  /** Checked here like SVC_LOG_LEVEL (a flag's text). */
  logLevel?: string | undefined;
  /** A path, or `-` for stderr. */
  logFile?: string | undefined;
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SVC_DATA_DIR || envPaths('svc', { suffix: '' }).data;
}

/** Parses the environment; a bad value fails with a message naming its variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): ServerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid server configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const hostFlagProblem = overrides.host === undefined ? undefined : hostProblem(overrides.host);
  if (hostFlagProblem) throw new ConfigError(`Invalid server configuration:\n  --host: ${hostFlagProblem}`);
  const logLevelFlag = overrides.logLevel === undefined ? undefined : LogLevelSchema.safeParse(overrides.logLevel);
  if (logLevelFlag?.success === false)
    throw new ConfigError(`Invalid server configuration:\n  --log-level: one of ${LogLevelSchema.options.join(', ')}`);
  const dataDir = path.resolve(overrides.dataDir ?? e.SVC_DATA_DIR ?? defaultDataDir(env));
  const logFile = overrides.logFile || e.SVC_LOG_FILE || path.join(dataDir, LOG_FILE);
  const trustedProxies = splitList(e.SVC_TRUSTED_PROXIES);
  return {
    dataDir,
    databaseFile: path.join(dataDir, 'svc.db'),
    host: overrides.host ?? e.HOST ?? '127.0.0.1',
    port: overrides.port ?? e.PORT,
    logLevel: logLevelFlag?.data ?? e.SVC_LOG_LEVEL,
    logFile: logFile === '-' ? null : path.resolve(logFile),
    publicUrl: e.SVC_PUBLIC_URL,
    admin: { email: e.SVC_ADMIN_EMAIL, password: e.SVC_ADMIN_PASSWORD },
    secrets: {
      ...(e.SVC_JWT_SECRET ? { jwtSecret: e.SVC_JWT_SECRET } : {}),
      ...(e.SVC_ENCRYPTION_KEY ? { encryptionKey: e.SVC_ENCRYPTION_KEY } : {}),
      ...(e.SVC_ENROLLMENT_PEPPER ? { enrollmentPepper: e.SVC_ENROLLMENT_PEPPER } : {}),
    },
    features: { mfa: e.ENABLE_2FA, registration: e.ENABLE_REGISTRATION },
    trustedProxies,
    bodyLimitBytes: e.SVC_BODY_LIMIT_BYTES,
    tokens: {
      accessTtlSeconds: e.SVC_ACCESS_TOKEN_TTL_SECONDS,
      refreshTtlSeconds: e.SVC_REFRESH_TOKEN_TTL_SECONDS,
      cookieSecure: e.SVC_COOKIE_SECURE,
    },
    throttle: {
      loginPerIp: e.SVC_LOGIN_IP_LIMIT,
      loginPerEmail: e.SVC_LOGIN_EMAIL_LIMIT,
      loginWindowSeconds: e.SVC_LOGIN_WINDOW_SECONDS,
      lockoutFailures: e.SVC_LOGIN_LOCKOUT_FAILURES,
      lockoutSeconds: e.SVC_LOGIN_LOCKOUT_SECONDS,
      mfaAttempts: e.SVC_MFA_LIMIT,
      mfaWindowSeconds: e.SVC_MFA_WINDOW_SECONDS,
      registerPerIp: e.SVC_REGISTER_LIMIT,
      registerPartnerPerIp: e.SVC_REGISTER_PARTNER_LIMIT,
      registerWindowSeconds: e.SVC_REGISTER_WINDOW_SECONDS,
    },
    jobs: { pollMs: e.SVC_JOB_POLL_MS },
    enrollment: { keyTtlMinutes: e.SVC_ENROLLMENT_KEY_TTL_MINUTES },
    shutdownTimeoutMs: e.SVC_SHUTDOWN_TIMEOUT_MS,
    mail: { smtpUrl: e.SVC_SMTP_URL, from: e.SVC_SMTP_FROM, timeoutMs: e.SVC_SMTP_TIMEOUT_MS },
    sms: {
      url: e.SVC_SMS_URL,
      token: e.SVC_SMS_TOKEN,
      timeoutMs: e.SVC_SMS_TIMEOUT_MS,
      codeTtlSeconds: e.SVC_SMS_CODE_TTL_SECONDS,
      codeAttempts: e.SVC_SMS_CODE_ATTEMPTS,
    },
    links: { inviteTtlHours: e.SVC_INVITE_TTL_HOURS, passwordResetTtlMinutes: e.SVC_PASSWORD_RESET_TTL_MINUTES },
    delivery: {
      smsPerUser: e.SVC_SMS_SEND_LIMIT,
      smsWindowSeconds: e.SVC_SMS_SEND_WINDOW_SECONDS,
      passwordResetPerIp: e.SVC_PASSWORD_RESET_LIMIT,
      passwordResetWindowSeconds: e.SVC_PASSWORD_RESET_WINDOW_SECONDS,
    },
    pam: {
      exportSettleSeconds: e.SVC_EXPORT_SETTLE_SECONDS,
      webauthnRpId: e.SVC_WEBAUTHN_RP_ID ?? (e.SVC_PUBLIC_URL ? new URL(e.SVC_PUBLIC_URL).hostname : 'localhost'),
      webauthnOrigins: e.SVC_WEBAUTHN_ORIGIN
        ? e.SVC_WEBAUTHN_ORIGIN.split(',').map((o) => o.trim())
        : [e.SVC_PUBLIC_URL ? new URL(e.SVC_PUBLIC_URL).origin : `http://localhost:${overrides.port ?? e.PORT}`],
    },
    outbound: { allow: splitList(e.SVC_OUTBOUND_ALLOW) },
    webhooks: { timeScale: e.SVC_WEBHOOK_TIME_SCALE === undefined ? 1 : Number(e.SVC_WEBHOOK_TIME_SCALE) },
    alerts: { timeScale: e.SVC_ALERT_TIME_SCALE === undefined ? 1 : Number(e.SVC_ALERT_TIME_SCALE) },
    alerting: {
      pagerdutyEventsUrl: e.SVC_PAGERDUTY_EVENTS_URL,
      twilio: {
        apiUrl: e.SVC_TWILIO_API_URL.replace(/\/+$/, ''),
        accountSid: e.SVC_TWILIO_ACCOUNT_SID,
        authToken: e.SVC_TWILIO_AUTH_TOKEN,
        from: e.SVC_TWILIO_FROM,
      },
    },
    mobilePush: {
      fcm:
        e.SVC_FCM_PROJECT_ID && e.SVC_FCM_SERVICE_ACCOUNT_FILE
          ? { projectId: e.SVC_FCM_PROJECT_ID, serviceAccountFile: e.SVC_FCM_SERVICE_ACCOUNT_FILE, apiUrl: e.SVC_FCM_API_URL.replace(/\/+$/, ''), tokenUrl: e.SVC_FCM_TOKEN_URL }
          : undefined,
      apns:
        e.SVC_APNS_KEY_FILE && e.SVC_APNS_KEY_ID && e.SVC_APNS_TEAM_ID && e.SVC_APNS_TOPIC
          ? { keyFile: e.SVC_APNS_KEY_FILE, keyId: e.SVC_APNS_KEY_ID, teamId: e.SVC_APNS_TEAM_ID, topic: e.SVC_APNS_TOPIC, url: e.SVC_APNS_URL.replace(/\/+$/, '') }
          : undefined,
    },
  };
}
