import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json, ref, revocable, singleUse, timestamps } from './columns.js';
import { organizations, partners } from './tenancy.js';

export const users = sqliteTable(
  'users',
  {
    id: id(),
    /** Stored lower-cased: e-mail lookups are case-insensitive. */
    email: text().notNull(),
    name: text().notNull(),
    avatarUrl: text(),
    status: text({ enum: ['active', 'invited', 'disabled'] }).notNull().default('active'),
    /** scrypt hash (security/passwords.ts); null for passwordless (SSO-provisioned or invited) users. */
    passwordHash: text(),
    /** The platform operator: caller scope "system" with every permission. */
    isSystemAdmin: integer({ mode: 'boolean' }).notNull().default(false),
    mfaEnabled: integer({ mode: 'boolean' }).notNull().default(false),
    mfaMethod: text({ enum: ['totp', 'sms'] }),
    /** AES-256-GCM under the server key (security/crypto.ts). */
    mfaSecretEnc: text(),
    /** A secret from setup that becomes mfaSecretEnc once a code proves it. */
    mfaPendingSecretEnc: text(),
    /** The last TOTP time step accepted for this user, by any check: a code works once (01 §4.5). */
    mfaLastTotpStep: integer(),
    phoneNumber: text(),
    phoneVerified: integer({ mode: 'boolean' }).notNull().default(false),
    failedLoginCount: integer().notNull().default(0),
    lockedUntil: text(),
    lastLoginAt: text(),
    passwordChangedAt: text(),
    ...timestamps(),
  },
  (t) => [uniqueIndex('users_email_unique').on(t.email)],
);

export const roles = sqliteTable(
  'roles',
  {
    id: id(),
    /** Owner of a custom role; both null for the built-in system roles shared by every tenant. */
    partnerId: text().references(() => partners.id),
    orgId: text().references(() => organizations.id),
    name: text().notNull(),
    description: text(),
    scope: text({ enum: ['partner', 'organization'] }).notNull(),
    isSystem: integer({ mode: 'boolean' }).notNull().default(false),
    parentRoleId: text(),
    ...timestamps(),
  },
  (t) => [index('roles_partner_idx').on(t.partnerId), index('roles_org_idx').on(t.orgId)],
);

export const rolePermissions = sqliteTable(
  'role_permissions',
  {
    roleId: ref(() => roles.id, { onDelete: 'cascade' }),
    resource: text().notNull(),
    action: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.roleId, t.resource, t.action] })],
);

/** 01 §2.6 partner-user link. */
export const partnerUsers = sqliteTable(
  'partner_users',
  {
    partnerId: ref(() => partners.id),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    roleId: ref(() => roles.id),
    orgAccess: text({ enum: ['all', 'selected', 'none'] }).notNull().default('all'),
    orgIds: json<string[]>(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.partnerId, t.userId] }), index('partner_users_user_idx').on(t.userId)],
);

/** 01 §2.6 organization-user link, optionally restricted to sites and device groups. */
export const organizationUsers = sqliteTable(
  'organization_users',
  {
    orgId: ref(() => organizations.id),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    roleId: ref(() => roles.id),
    siteIds: json<string[]>(),
    deviceGroupIds: json<string[]>(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] }), index('organization_users_user_idx').on(t.userId)],
);

/** A signed-in session; access tokens name it (`sid`) so revoking it ends them at once. */
export const sessions = sqliteTable(
  'sessions',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    mfa: integer({ mode: 'boolean' }).notNull().default(false),
    /** How the session was opened: with the account's password, or through the organization's SSO provider (a
     * session opened from another by MFA step-up keeps the first one's). Null for sessions older than the column:
     * unknown, so treated as password sessions (SSO enforcement ends them). */
    signInMethod: text({ enum: ['password', 'sso'] }),
    ipAddress: text(),
    userAgent: text(),
    ...revocable(),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

/** Refresh tokens as SHA-256; each refresh revokes the presented one and issues its successor. */
export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    id: id(),
    sessionId: ref(() => sessions.id, { onDelete: 'cascade' }),
    tokenHash: text().notNull(),
    ...revocable(),
  },
  (t) => [uniqueIndex('refresh_tokens_hash_unique').on(t.tokenHash), index('refresh_tokens_session_idx').on(t.sessionId)],
);

export const mfaRecoveryCodes = sqliteTable(
  'mfa_recovery_codes',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    codeHash: text().notNull(),
    usedAt: text(),
    createdAt: createdAt(),
  },
  (t) => [index('mfa_recovery_codes_user_idx').on(t.userId)],
);

/** Single-use links sent by e-mail (invitations, password resets), stored as SHA-256 of the raw token. */
export const userTokens = sqliteTable(
  'user_tokens',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    purpose: text({ enum: ['invite', 'password_reset'] }).notNull(),
    tokenHash: text().notNull(),
    ...singleUse(),
  },
  (t) => [uniqueIndex('user_tokens_hash_unique').on(t.tokenHash), index('user_tokens_user_idx').on(t.userId, t.purpose)],
);

/** Codes sent by SMS (phone verification, sign-in), stored as an HMAC under a server key, with an expiry and
 * a count of wrong guesses (01 §4.5, §5.7). */
export const smsCodes = sqliteTable(
  'sms_codes',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    purpose: text({ enum: ['phone_verify', 'mfa_login'] }).notNull(),
    /** The number the code went to (E.164); a verified phone_verify code makes it the user's number. */
    phoneNumber: text().notNull(),
    codeHash: text().notNull(),
    attempts: integer().notNull().default(0),
    expiresAt: text().notNull(),
    consumedAt: text(),
    createdAt: createdAt(),
  },
  (t) => [index('sms_codes_user_idx').on(t.userId, t.purpose)],
);
