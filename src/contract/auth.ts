import { z } from 'zod';
import { NameSchema, TimestampSchema, UuidSchema } from './common.js';
import { endpoint } from './endpoint.js';

const Email = z.email().max(255);
/** An address looked up, never stored (login, forgot-password): any `local@domain`, so an account whose address
 * an older svc created (`admin@localhost`) can still sign in; stricter than that would only refuse users. */
export const LookupEmail = z
  .string()
  .trim()
  .max(255)
  .regex(/^[^\s@]+@[^\s@]+$/, 'Invalid email address');
const PasswordInput = z.string().min(1).max(1024);
const TotpCode = z.string().regex(/^\d{6}$/, 'expected a 6-digit code');

export const TokenPairSchema = z.object({
  accessToken: z.string(),
  /** Also set as the HTTP-only `svc_refresh_token` cookie; returned in the body for non-browser clients. */
  refreshToken: z.string(),
  expiresInSeconds: z.number().int(),
});

export const AuthUserSchema = z.object({
  id: UuidSchema,
  email: z.string(),
  name: z.string(),
  mfaEnabled: z.boolean(),
});

export const LoginResponseSchema = z.union([
  z.object({
    mfaRequired: z.literal(true),
    tempToken: z.string(),
    mfaMethod: z.enum(['totp', 'sms']),
  }),
  z.object({
    mfaRequired: z.literal(false),
    user: AuthUserSchema,
    tokens: TokenPairSchema,
  }),
]);

export const SessionResponseSchema = z.object({ user: AuthUserSchema, tokens: TokenPairSchema });

export const MeSchema = z.object({
  id: UuidSchema,
  email: z.string(),
  name: z.string(),
  avatarUrl: z.string().nullable(),
  status: z.enum(['active', 'invited', 'disabled']),
  mfaEnabled: z.boolean(),
  mfaMethod: z.enum(['totp', 'sms']).nullable(),
  scope: z.enum(['system', 'partner', 'organization']),
  partnerId: UuidSchema.nullable(),
  orgId: UuidSchema.nullable(),
  roleId: UuidSchema.nullable(),
  roleName: z.string().nullable(),
  permissions: z.array(z.string()),
  lastLoginAt: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
});

export const MeUpdateSchema = z.strictObject({
  name: NameSchema.optional(),
  avatarUrl: z.url().max(2048).nullable().optional(),
});

export const MessageSchema = z.object({ success: z.boolean(), message: z.string() });

export const RegisterPartnerSchema = z.strictObject({
  companyName: z.string().trim().min(2).max(255),
  name: NameSchema,
  email: Email,
  password: PasswordInput,
  acceptTerms: z.boolean(),
});

export const RegisterSchema = z.strictObject({
  name: NameSchema,
  email: Email,
  password: PasswordInput,
  acceptTerms: z.boolean().optional(),
});

export const RegisterPartnerResponseSchema = z.union([
  z.object({
    user: z.object({ id: UuidSchema, name: z.string(), mfaEnabled: z.boolean() }),
    partner: z.object({ id: UuidSchema, name: z.string(), slug: z.string() }),
    tokens: z.object({ accessToken: z.string(), expiresInSeconds: z.number().int() }),
    mfaRequired: z.boolean(),
  }),
  /** An e-mail already registered gets this generic answer, never an error (01 §4.6). */
  MessageSchema,
]);

export const RegisterResponseSchema = z.union([
  z.object({
    user: z.object({ id: UuidSchema, name: z.string(), mfaEnabled: z.boolean() }),
    tokens: z.object({ accessToken: z.string(), expiresInSeconds: z.number().int() }),
    mfaRequired: z.boolean(),
  }),
  MessageSchema,
]);

export const MfaSetupResponseSchema = z.object({
  secret: z.string(),
  otpAuthUrl: z.string(),
  qrCodeDataUrl: z.string(),
  recoveryCodes: z.array(z.string()),
});

export const RecoveryCodesSchema = z.object({ recoveryCodes: z.array(z.string()) });

export const auth = {
  login: endpoint({
    method: 'POST',
    path: '/auth/login',
    body: z.strictObject({ email: LookupEmail, password: PasswordInput }),
    responses: { 200: LoginResponseSchema },
    auth: { public: true },
    summary: 'Sign in with e-mail and password; with MFA on, returns a 5-minute tempToken instead of tokens',
  }),
  refresh: endpoint({
    method: 'POST',
    path: '/auth/refresh',
    body: z.strictObject({ refreshToken: z.string().min(1).max(512).optional() }),
    responses: { 200: z.object({ tokens: TokenPairSchema }) },
    auth: { public: true },
    summary: 'Exchange a refresh token (cookie with x-svc-csrf header, or body) for a new pair; the old one is revoked',
  }),
  logout: endpoint({
    method: 'POST',
    path: '/auth/logout',
    responses: { 200: MessageSchema },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: "Revoke every token of the caller's account and clear the refresh cookie",
  }),
  register: endpoint({
    method: 'POST',
    path: '/auth/register',
    body: RegisterSchema,
    responses: { 201: RegisterResponseSchema },
    auth: { public: true },
    summary: 'Register a standalone user (when ENABLE_REGISTRATION is on)',
  }),
  registerPartner: endpoint({
    method: 'POST',
    path: '/auth/register-partner',
    body: RegisterPartnerSchema,
    responses: { 201: RegisterPartnerResponseSchema },
    auth: { public: true },
    summary: 'Register a partner (company), its admin user and its Partner Admin role',
  }),
  mfaSetup: endpoint({
    method: 'POST',
    path: '/auth/mfa/setup',
    // Clients of hosted deployments send the account's password here (issue 15 item 2); when given it must verify.
    body: z.strictObject({ currentPassword: PasswordInput.optional().describe("The account's password; verified when given") }),
    responses: { 200: MfaSetupResponseSchema },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: 'Start TOTP setup: a new secret, its otpauth URL and QR code, and recovery codes',
  }),
  mfaVerify: endpoint({
    method: 'POST',
    path: '/auth/mfa/verify',
    body: z.strictObject({ code: z.string().min(6).max(32), tempToken: z.string().min(1).max(4096).optional() }),
    responses: { 200: SessionResponseSchema },
    auth: { public: true },
    summary: 'Complete an MFA sign-in with a TOTP or recovery code and the tempToken',
  }),
  mfaEnable: endpoint({
    method: 'POST',
    path: '/auth/mfa/enable',
    body: z.strictObject({
      code: TotpCode,
      currentPassword: PasswordInput.optional().describe("The account's password; verified when given"),
    }),
    responses: { 200: SessionResponseSchema.extend({ success: z.literal(true) }) },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: 'Enable MFA with a code from the authenticator; returns a fresh session with mfa true',
  }),
  mfaDisable: endpoint({
    method: 'POST',
    path: '/auth/mfa/disable',
    body: z.strictObject({ code: z.string().min(6).max(32) }),
    responses: { 200: MessageSchema },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: 'Disable MFA (refused when the partner or organization enforces it)',
  }),
  mfaRecoveryCodes: endpoint({
    method: 'POST',
    path: '/auth/mfa/recovery-codes',
    responses: { 200: RecoveryCodesSchema },
    // 01 §4.5 shows no body: the proof is the session's MFA, as on every "+ MFA" route.
    auth: { allowInactivePartner: true, sessionOnly: true, mfa: true },
    summary: 'Replace every recovery code with a new set (shown once); needs a session signed in with MFA',
  }),
  changePassword: endpoint({
    method: 'POST',
    path: '/auth/change-password',
    body: z.strictObject({ currentPassword: PasswordInput, newPassword: PasswordInput }),
    responses: { 200: MessageSchema },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: 'Change the password; every session of the account ends',
  }),
  getMe: endpoint({
    method: 'GET',
    path: '/users/me',
    responses: { 200: MeSchema },
    auth: { allowInactivePartner: true },
    summary: 'The signed-in user, with scope and effective permissions',
  }),
  updateMe: endpoint({
    method: 'PATCH',
    path: '/users/me',
    body: MeUpdateSchema,
    responses: { 200: MeSchema },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: "Update the signed-in user's name or avatar",
  }),
  // Issue 15 item 11: the deployed service's web and mobile clients read the signed-in user here.
  me: endpoint({
    method: 'GET',
    path: '/auth/me',
    responses: { 200: z.object({ user: MeSchema }) },
    auth: { allowInactivePartner: true },
    summary: 'The signed-in user as {user}, the same user as GET /users/me',
  }),
} as const;
