import path from 'node:path';
import envPaths from 'env-paths';
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

/** Every setting the server reads from its environment, by the variable's own name. */
const EnvSchema = z.object({
  SVC_DATA_DIR: optionalString,
  HOST: optionalString,
  PORT: int(3000, 0, 65535),
  SVC_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional().default('info'),
  SVC_PUBLIC_URL: z.url().optional(),
  SVC_ADMIN_EMAIL: z.email().optional(),
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
  SVC_SHUTDOWN_TIMEOUT_MS: int(10_000, 100, 600_000),
});

export interface ServerConfig {
  dataDir: string;
  databaseFile: string;
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
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
  shutdownTimeoutMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface ConfigOverrides {
  dataDir?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  logLevel?: ServerConfig['logLevel'] | undefined;
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
  const dataDir = path.resolve(overrides.dataDir ?? e.SVC_DATA_DIR ?? defaultDataDir(env));
  const trustedProxies = (e.SVC_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    dataDir,
    databaseFile: path.join(dataDir, 'svc.db'),
    host: overrides.host ?? e.HOST ?? '127.0.0.1',
    port: overrides.port ?? e.PORT,
    logLevel: overrides.logLevel ?? e.SVC_LOG_LEVEL,
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
    shutdownTimeoutMs: e.SVC_SHUTDOWN_TIMEOUT_MS,
  };
}
