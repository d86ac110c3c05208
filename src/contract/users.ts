import { z } from 'zod';
import { deleteById, getById, listPaged, updateById } from './builders.js';
import { LookupEmail, SessionResponseSchema } from './auth.js';
import { NameSchema as Name, PageQuerySchema, SuccessSchema, TimestampSchema, UuidSchema, successWith } from './common.js';
import { endpoint } from './endpoint.js';
import { RoleScopeSchema } from './roles.js';

const IdParams = z.object({ id: UuidSchema.describe('User id') });
const Email = z.email().max(255);
const PasswordInput = z.string().min(1).max(1024);
const Ids = z.array(UuidSchema).max(1000);

export const UserStatusSchema = z.enum(['active', 'invited', 'disabled']);
export const OrgAccessSchema = z.enum(['all', 'selected', 'none']);

/**
 * A user as seen by an administrator (01 §2.7, 04 wire notes "Users and roles"), with the one link that
 * makes them a member: partner users carry orgAccess and orgIds, organization users siteIds and
 * deviceGroupIds (null: all).
 */
export const UserSchema = z.object({
  id: UuidSchema,
  email: z.string(),
  name: z.string(),
  avatarUrl: z.string().nullable(),
  status: UserStatusSchema,
  lastLoginAt: TimestampSchema.nullable(),
  mfaEnabled: z.boolean(),
  mfaMethod: z.enum(['totp', 'sms']).nullable(),
  /** partner or organization; null for a user with no membership (system administrator, standalone user). */
  scope: RoleScopeSchema.nullable(),
  partnerId: UuidSchema.nullable(),
  orgId: UuidSchema.nullable(),
  roleId: UuidSchema.nullable(),
  roleName: z.string().nullable(),
  orgAccess: OrgAccessSchema.optional(),
  orgIds: z.array(UuidSchema).optional(),
  siteIds: z.array(UuidSchema).nullable().optional(),
  deviceGroupIds: z.array(UuidSchema).nullable().optional(),
  createdAt: TimestampSchema,
});
export type User = z.infer<typeof UserSchema>;

export const UserListQuerySchema = PageQuerySchema.extend({
  partnerId: UuidSchema.optional().describe('System callers: only users of this partner'),
  orgId: UuidSchema.optional().describe('Only users of this organization (partner callers: one they reach)'),
  status: UserStatusSchema.optional().describe('Only users in this state'),
  roleId: UuidSchema.optional().describe('Only users holding this role'),
  search: z.string().trim().min(1).max(255).optional().describe('Part of the e-mail address or name'),
});

export const UserInviteSchema = z.strictObject({
  email: Email.describe('E-mail address of the person to invite'),
  name: Name.describe('Their name (1-255 characters)'),
  roleId: UuidSchema.describe('Role to give them: a partner role for partner users, an organization role for organization users'),
  orgAccess: OrgAccessSchema.optional().describe('Partner users: which organizations they reach (default all)'),
  orgIds: Ids.optional().describe('Partner users with orgAccess selected: the organizations'),
  siteIds: Ids.nullable().optional().describe('Organization users: only these sites (omitted: all)'),
  deviceGroupIds: Ids.nullable().optional().describe('Organization users: only these device groups (omitted: all)'),
  partnerId: UuidSchema.optional().describe('System callers: invite into this partner'),
  orgId: UuidSchema.optional().describe('Invite into this organization (organization user) instead of the partner'),
});

export const InviteResultSchema = z.object({
  id: UuidSchema,
  email: z.string(),
  name: z.string(),
  status: UserStatusSchema,
  roleId: UuidSchema,
  /** Whether the invitation e-mail was accepted by the mail server. */
  inviteEmailSent: z.boolean(),
  /** The acceptance link, when the e-mail was not sent, so it can be passed on; null otherwise. */
  inviteUrl: z.string().nullable(),
});

export const ResendInviteSchema = z
  .strictObject({
    userId: UuidSchema.optional().describe('The invited user'),
    email: Email.optional().describe('Or their e-mail address'),
  })
  .refine((b) => (b.userId === undefined) !== (b.email === undefined), { message: 'give exactly one of userId and email' });

export const ResendInviteResultSchema = z.object({
  id: UuidSchema,
  email: z.string(),
  inviteEmailSent: z.boolean(),
  inviteUrl: z.string().nullable(),
});

export const UserUpdateSchema = z.strictObject({
  name: Name.optional().describe('New name'),
  status: z.enum(['active', 'disabled']).optional().describe('disabled ends every session at once (and withdraws an invitation); active re-enables'),
});

export const AssignRoleSchema = z.strictObject({
  roleId: UuidSchema.describe('The role to give the user (same scope as their membership)'),
});

export const PasswordResetLinkSchema = z.object({
  id: UuidSchema,
  email: z.string(),
  /** Whether the reset e-mail was accepted by the mail server. */
  resetEmailSent: z.boolean(),
  /** The reset link, when the e-mail was not sent, so it can be passed on; null otherwise. */
  resetUrl: z.string().nullable(),
  expiresAt: TimestampSchema,
});

export const UserRoleOptionSchema = z.object({
  id: UuidSchema,
  name: z.string(),
  description: z.string().nullable(),
  scope: RoleScopeSchema,
  isSystem: z.boolean(),
});

const READ = { permission: 'users:read' } as const;
/** Changes to who may sign in and what they may do: a user session with MFA (docs/api-notes.md). */
const WRITE = { permission: 'users:write', mfa: true, sessionOnly: true } as const;
const INVITE = { permission: 'users:invite', mfa: true, sessionOnly: true } as const;

/** 01 §4.4 users of the caller's partner or organization. */
export const users = {
  list: listPaged('/users', UserListQuerySchema, UserSchema, READ,
    "List the users of the caller's partner or organization, by e-mail"),
  listRoles: endpoint({
    method: 'GET',
    path: '/users/roles',
    responses: { 200: z.object({ data: z.array(UserRoleOptionSchema) }) },
    auth: READ,
    summary: 'The roles the caller can see and assign',
  }),
  invite: endpoint({
    method: 'POST',
    path: '/users/invite',
    body: UserInviteSchema,
    responses: { 201: InviteResultSchema },
    auth: INVITE,
    // Not idempotent on purpose: a replay record would keep the invitation link in plaintext; a repeated
    // invitation answers 409 and POST /users/resend-invite issues a new link.
    summary: 'Invite a user: e-mails a single-use link (or returns it when no mail service is configured)',
  }),
  resendInvite: endpoint({
    method: 'POST',
    path: '/users/resend-invite',
    body: ResendInviteSchema,
    responses: { 200: ResendInviteResultSchema },
    auth: INVITE,
    summary: 'Send an invited user a new link; the previous one stops working',
  }),
  get: getById('/users/:id', UserSchema, READ, 'Get a user with their role and membership', IdParams),
  update: updateById('/users/:id', UserUpdateSchema, UserSchema, WRITE,
    'Rename a user, or disable (ending their sessions at once) or re-enable them', IdParams),
  remove: deleteById('/users/:id', SuccessSchema, { permission: 'users:delete', mfa: true, sessionOnly: true },
    "Remove a user from the caller's partner or organization (the account itself remains)", IdParams),
  assignRole: endpoint({
    method: 'POST',
    path: '/users/:id/role',
    params: IdParams,
    body: AssignRoleSchema,
    responses: { 200: UserSchema },
    auth: WRITE,
    summary: "Change a user's role (not your own)",
  }),
  resetPassword: endpoint({
    method: 'POST',
    path: '/users/:id/reset-password',
    params: IdParams,
    responses: { 200: PasswordResetLinkSchema },
    auth: WRITE,
    summary: 'Issue a password-reset link for a user: e-mailed, or returned when no mail service is configured',
  }),
} as const;

// ---- The account endpoints of 01 §4.5 that users reach before or while signing in ----

const Token = z.string().min(1).max(512);
const SmsCode = z.string().regex(/^\d{6}$/, 'expected a 6-digit code');

/** E.164: a plus sign, then up to 15 digits, the first not zero. */
export const PhoneNumberSchema = z.string().regex(/^\+[1-9]\d{1,14}$/, 'expected an E.164 number such as +14155550100');

export const MessageResultSchema = z.object({ success: z.boolean(), message: z.string() });

export const CodeSentSchema = successWith({
  message: z.string(),
  expiresInSeconds: z.number().int(),
});

export const account = {
  acceptInvite: endpoint({
    method: 'POST',
    path: '/auth/accept-invite',
    body: z.strictObject({
      token: Token.describe('The token from the invitation link'),
      password: PasswordInput.describe('The new password (min 8, strength checked)'),
      name: Name.optional().describe('Your name, if it should differ from the one in the invitation'),
    }),
    responses: { 200: SessionResponseSchema },
    auth: { public: true },
    summary: 'Accept an invitation: set the password, activate the account and sign in',
  }),
  forgotPassword: endpoint({
    method: 'POST',
    path: '/auth/forgot-password',
    body: z.strictObject({ email: LookupEmail.describe('The e-mail address of the account') }),
    responses: { 200: MessageResultSchema },
    auth: { public: true },
    summary: 'E-mail a password-reset link valid for one hour; the answer is the same whether the account exists or not',
  }),
  resetPassword: endpoint({
    method: 'POST',
    path: '/auth/reset-password',
    body: z.strictObject({
      token: Token.describe('The token from the reset link'),
      password: PasswordInput.describe('The new password (min 8, strength checked)'),
    }),
    responses: { 200: MessageResultSchema },
    auth: { public: true },
    summary: 'Set a new password with a reset token; every session of the account ends',
  }),
  phoneVerify: endpoint({
    method: 'POST',
    path: '/auth/phone/verify',
    body: z.strictObject({ phoneNumber: PhoneNumberSchema.describe('Phone number in E.164 form, e.g. +14155550100') }),
    responses: { 200: CodeSentSchema },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: 'Send a 6-digit verification code by SMS to a phone number',
  }),
  phoneConfirm: endpoint({
    method: 'POST',
    path: '/auth/phone/confirm',
    body: z.strictObject({ code: SmsCode.describe('The code from the SMS') }),
    responses: { 200: successWith({ phoneNumber: z.string(), phoneVerified: z.literal(true) }) },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: 'Confirm the phone number with the code sent to it',
  }),
  mfaSmsSend: endpoint({
    method: 'POST',
    path: '/auth/mfa/sms/send',
    body: z.strictObject({
      tempToken: z.string().min(1).max(4096).optional().describe('The tempToken from login (without it: the bearer session, to step up)'),
    }),
    responses: { 200: CodeSentSchema },
    auth: { public: true },
    summary: 'Send a sign-in code by SMS to the verified phone of an SMS-MFA user; then POST /auth/mfa/verify',
  }),
  mfaSmsEnable: endpoint({
    method: 'POST',
    path: '/auth/mfa/sms/enable',
    responses: {
      200: successWith({ mfaMethod: z.literal('sms'), recoveryCodes: z.array(z.string()) }),
    },
    auth: { allowInactivePartner: true, sessionOnly: true },
    summary: 'Turn on SMS multi-factor sign-in (needs a verified phone); returns recovery codes, shown once',
  }),
} as const;
