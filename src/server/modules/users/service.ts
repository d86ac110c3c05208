import type { z } from 'zod';
import type {
  ResendInviteSchema,
  UserInviteSchema,
  UserListQuerySchema,
  UserUpdateSchema,
} from '../../../contract/users.js';
import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { insertRow, rowById, updateRow } from '../../db/prepared.js';
import { committed } from '../../db/group-commit.js';
import { organizationUsers, partnerUsers, users } from '../../db/schema/index.js';
import { publicBaseUrl, tokenLink } from '../../delivery/links.js';
import type { Mailer } from '../../delivery/mailer.js';
import { inviteMessage, passwordResetMessage } from '../../delivery/messages.js';
import type { Caller, RequestContext } from '../../context.js';
import {
  badRequest,
  conflict,
  deviceGroupAccessDenied,
  fieldError,
  forbidden,
  notFound,
  orgAccessDenied,
  reachNotHeld,
  siteAccessDenied,
} from '../../errors.js';
import { paged, type Paged } from '../../lib/paging.js';
import { recordAudit } from '../audit/recorder.js';
import { roleNames } from '../identity/caller-resolver.js';
import { userByEmail, type Directory, type Member, type Membership, type UserRow } from '../identity/directory.js';
import type { SessionService } from '../identity/sessions.js';
import { issueUserToken, revokeUserTokens } from '../identity/user-tokens.js';
import type { RoleTarget, RolesService } from '../roles/service.js';
import { accessibleOrgIds, isLiveOrgOfPartner, isSiteOfOrg } from '../tenancy/access.js';
import type { TenancyService } from '../tenancy/service.js';
import { groupsOfOrg } from '../groups/service.js';
import { reachBeyond } from './reach.js';

type ListQuery = z.infer<typeof UserListQuerySchema>;
type InviteBody = z.infer<typeof UserInviteSchema>;

/** The user as an administrator sees it (contract UserSchema). */
export function userView(user: UserRow, membership: Membership | null, roleName: string | null) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    avatarUrl: user.avatarUrl,
    status: user.status,
    lastLoginAt: user.lastLoginAt,
    mfaEnabled: user.mfaEnabled,
    mfaMethod: user.mfaMethod,
    createdAt: user.createdAt,
    scope: membership?.kind ?? null,
    partnerId: membership?.partnerId ?? null,
    orgId: membership?.kind === 'organization' ? membership.orgId : null,
    roleId: membership?.roleId ?? null,
    roleName,
    ...(membership?.kind === 'partner' ? { orgAccess: membership.orgAccess, orgIds: membership.orgIds } : {}),
    ...(membership?.kind === 'organization' ? { siteIds: membership.siteIds, deviceGroupIds: membership.deviceGroupIds } : {}),
  };
}

function sameTenant(membership: Membership, target: RoleTarget): boolean {
  if (membership.kind !== target.kind) return false;
  return membership.kind === 'partner' ? membership.partnerId === target.partnerId : membership.orgId === target.orgId;
}

function targetOf(membership: Membership): RoleTarget {
  return membership.kind === 'partner'
    ? { kind: 'partner', partnerId: membership.partnerId, orgId: null }
    : { kind: 'organization', partnerId: membership.partnerId, orgId: membership.orgId };
}

/** The link columns of an invitation, checked against the target and the caller's own reach. */
type LinkValues =
  | { kind: 'partner'; orgAccess: 'all' | 'selected' | 'none'; orgIds: string[] | null }
  | { kind: 'organization'; siteIds: string[] | null; deviceGroupIds: string[] | null };

/**
 * Users of partners and organizations (01 §2.7, §4.4): listing, invitations with single-use links,
 * disabling (every session ends at once), removal from the tenant, and role assignment. Every query is
 * limited to the caller's reach (identity/directory.ts).
 */
export class UsersService {
  constructor(
    private readonly db: Db,
    private readonly config: ServerConfig,
    private readonly directory: Directory,
    private readonly roles: RolesService,
    private readonly tenancy: TenancyService,
    private readonly sessions: SessionService,
    private readonly mailer: Mailer,
  ) {}

  private views(members: Member[]) {
    const names = roleNames(this.db, [...new Set(members.flatMap((m) => (m.membership ? [m.membership.roleId] : [])))]);
    return members.map(({ user, membership }) => userView(user, membership, membership ? (names.get(membership.roleId) ?? null) : null));
  }

  private view(member: Member) {
    const [view] = this.views([member]);
    if (!view) throw notFound('User not found');
    return view;
  }

  /** A user the caller can manage: system callers any user; others members of the links they reach (404). */
  requireMember(caller: Caller, userId: string): Member {
    const user = rowById(this.db, users, userId);
    if (!user) throw notFound('User not found');
    const membership = this.directory.membershipOf(user.id);
    if (caller.scope === 'system') return { user, membership };
    if (!membership || !this.directory.covers(this.directory.reach(caller), membership)) throw notFound('User not found');
    return { user, membership };
  }

  /** A caller does not manage (disable, remove, re-role, reset, re-invite) a user whose role exceeds its own, nor
   * one whose link reaches further than its own (01 §1): otherwise a narrower administrator could take over a
   * broader one, e.g. through a reset link returned to it when mail is not configured. */
  private assertNotBeyond(caller: Caller, member: Member): void {
    if (!member.membership || caller.scope === 'system') return;
    const beyond = this.roles.permissionsBeyond(caller, member.membership.roleId);
    if (beyond.length > 0) {
      throw forbidden('Cannot manage a user whose role has permissions you do not hold', 'PERMISSION_NOT_HELD', { missing: beyond });
    }
    const wider = reachBeyond(this.db, caller, member.membership);
    if (wider.length > 0) throw reachNotHeld(wider);
  }

  /** The audit entry of an action on a user account, in the tenant of its membership (the caller's partner when
   * it has none). */
  private auditUser(
    ctx: RequestContext,
    action: string,
    user: { id: string; email: string },
    membership: Membership | null | undefined,
    details?: Record<string, unknown>,
  ): void {
    recordAudit(this.db, ctx, {
      action,
      resourceType: 'user',
      resourceId: user.id,
      resourceName: user.email,
      orgId: membership?.kind === 'organization' ? membership.orgId : null,
      partnerId: membership?.partnerId ?? ctx.caller.partnerId,
      ...(details ? { details } : {}),
    });
  }

  private requireMembership(member: Member): Membership {
    if (!member.membership) throw badRequest('User is not a member of a partner or organization', 'NOT_A_MEMBER');
    return member.membership;
  }

  // ---- reads ----

  list(ctx: RequestContext, query: ListQuery): Paged<ReturnType<typeof userView>> {
    const { caller } = ctx;
    let members: Member[];
    if (query.orgId) {
      this.tenancy.requireOrg(ctx, query.orgId);
      members = this.directory.members({ partnerIds: [], orgIds: [query.orgId] });
    } else if (query.partnerId) {
      if (caller.scope === 'system') this.tenancy.getPartner(query.partnerId);
      else if (caller.scope !== 'partner' || query.partnerId !== caller.partnerId) throw forbidden();
      members = this.directory.members({ partnerIds: [query.partnerId], orgIds: [] });
    } else if (caller.scope === 'system') {
      members = [
        ...this.directory.members({ partnerIds: null, orgIds: null }),
        ...this.directory.unlinkedUsers().map((user) => ({ user, membership: null })),
      ];
    } else if (caller.scope === 'partner') {
      members = this.directory.members({ partnerIds: caller.partnerId ? [caller.partnerId] : [], orgIds: [] });
    } else {
      members = this.directory.members({ partnerIds: [], orgIds: caller.orgId ? [caller.orgId] : [] });
    }
    const search = query.search?.toLowerCase();
    const filtered = members
      .filter(({ user, membership }) => {
        if (query.status && user.status !== query.status) return false;
        if (query.roleId && membership?.roleId !== query.roleId) return false;
        if (search && !user.email.includes(search) && !user.name.toLowerCase().includes(search)) return false;
        return true;
      })
      .sort((a, b) => a.user.email.localeCompare(b.user.email) || a.user.id.localeCompare(b.user.id));
    const start = (query.page - 1) * query.limit;
    return paged(this.views(filtered.slice(start, start + query.limit)), query, filtered.length);
  }

  get(ctx: RequestContext, id: string) {
    return this.view(this.requireMember(ctx.caller, id));
  }

  // ---- invitations ----

  /** Where an invitation puts the user: the caller's partner (default for partner callers), an organization
   * named by orgId, or the caller's own organization; system callers name partnerId or orgId. */
  private inviteTarget(ctx: RequestContext, body: InviteBody): RoleTarget {
    const { caller } = ctx;
    const intoOrg = (orgId: string): RoleTarget => {
      const org = this.tenancy.requireOrg(ctx, orgId);
      return { kind: 'organization', partnerId: org.partnerId, orgId: org.id };
    };
    if (caller.scope === 'system') {
      if ((body.partnerId === undefined) === (body.orgId === undefined)) {
        throw badRequest('System callers name where to invite: partnerId or orgId', 'TARGET_REQUIRED');
      }
      if (body.orgId !== undefined) return intoOrg(body.orgId);
      return { kind: 'partner', partnerId: this.tenancy.getPartner(body.partnerId ?? '').id, orgId: null };
    }
    if (caller.scope === 'partner') {
      if (body.partnerId !== undefined && body.partnerId !== caller.partnerId) {
        throw forbidden('partnerId must be your own partner', 'PARTNER_MISMATCH');
      }
      if (body.orgId !== undefined) return intoOrg(body.orgId);
      if (!caller.partnerId) throw forbidden('Invitations need a partner or organization', 'NO_TENANT');
      return { kind: 'partner', partnerId: caller.partnerId, orgId: null };
    }
    if (body.partnerId !== undefined) throw forbidden('partnerId is only for partner and system callers', 'PARTNER_MISMATCH');
    if (!caller.orgId || !caller.partnerId) throw forbidden('Invitations need a partner or organization', 'NO_TENANT');
    if (body.orgId !== undefined && body.orgId !== caller.orgId) throw orgAccessDenied();
    return { kind: 'organization', partnerId: caller.partnerId, orgId: caller.orgId };
  }

  /** The link of an invited partner user (orgAccess, orgIds) or organization user (siteIds, deviceGroupIds):
   * fields of the other kind are refused, ids must belong to the tenant, and a caller cannot grant reach it
   * does not have itself. */
  private linkValues(caller: Caller, target: RoleTarget, body: InviteBody): LinkValues {
    if (target.kind === 'partner') {
      if (body.siteIds !== undefined || body.deviceGroupIds !== undefined) {
        throw badRequest('siteIds and deviceGroupIds are for organization users', 'FIELD_NOT_APPLICABLE');
      }
      const orgAccess = body.orgAccess ?? 'all';
      const orgIds = [...new Set(body.orgIds ?? [])];
      if (orgAccess !== 'selected' && orgIds.length > 0) throw fieldError('orgIds', 'only used with orgAccess selected');
      if (orgAccess === 'selected' && body.orgIds === undefined) throw fieldError('orgIds', 'required with orgAccess selected');
      for (const orgId of orgIds) {
        if (!isLiveOrgOfPartner(this.db, orgId, target.partnerId)) throw fieldError('orgIds', `unknown organization ${orgId}`);
      }
      if (caller.scope === 'partner' && caller.orgAccess !== 'all') {
        if (orgAccess === 'all') throw forbidden('Cannot grant access to all organizations without having it', 'ORG_ACCESS_DENIED');
        const reach = accessibleOrgIds(this.db, caller) ?? [];
        if (orgIds.some((id) => !reach.includes(id))) throw orgAccessDenied();
      }
      return { kind: 'partner', orgAccess, orgIds: orgAccess === 'selected' ? orgIds : null };
    }
    if (body.orgAccess !== undefined || body.orgIds !== undefined) {
      throw badRequest('orgAccess and orgIds are for partner users', 'FIELD_NOT_APPLICABLE');
    }
    let siteIds = body.siteIds ? [...new Set(body.siteIds)] : null;
    for (const siteId of siteIds ?? []) {
      if (!isSiteOfOrg(this.db, siteId, target.orgId ?? '')) throw fieldError('siteIds', `unknown site ${siteId}`);
    }
    // A user restricted to some sites invites within them; without siteIds the new user gets the same ones.
    if (caller.siteIds !== null) {
      if (siteIds === null) siteIds = [...caller.siteIds];
      else if (siteIds.some((id) => !caller.siteIds?.includes(id))) throw siteAccessDenied();
    }
    let deviceGroupIds = body.deviceGroupIds ? [...new Set(body.deviceGroupIds)] : null;
    const groupsOfTarget = groupsOfOrg(this.db, target.orgId ?? '', deviceGroupIds ?? []);
    for (const groupId of deviceGroupIds ?? []) {
      if (!groupsOfTarget.has(groupId)) throw fieldError('deviceGroupIds', `unknown device group ${groupId}`);
    }
    // Likewise for device groups: within the inviter's own, which a new user without deviceGroupIds inherits.
    if (caller.deviceGroupIds !== null) {
      if (deviceGroupIds === null) deviceGroupIds = [...caller.deviceGroupIds];
      else if (deviceGroupIds.some((id) => !caller.deviceGroupIds?.includes(id))) throw deviceGroupAccessDenied();
    }
    return { kind: 'organization', siteIds, deviceGroupIds };
  }

  private insertLink(tx: Db, userId: string, roleId: string, target: RoleTarget, link: LinkValues): void {
    if (link.kind === 'partner') {
      insertRow(tx, partnerUsers, { partnerId: target.partnerId, userId, roleId, orgAccess: link.orgAccess, orgIds: link.orgIds });
    } else {
      insertRow(tx, organizationUsers, { orgId: target.orgId ?? '', userId, roleId, siteIds: link.siteIds, deviceGroupIds: link.deviceGroupIds });
    }
  }

  private inviteTtlMs(): number {
    return this.config.links.inviteTtlHours * 3600_000;
  }

  /** Mails an invitation link; the link comes back when the mail did not go out, so it can be passed on. */
  private async deliverInvite(ctx: RequestContext, user: UserRow, token: { token: string; expiresAt: string }) {
    const link = tokenLink(publicBaseUrl(this.config), 'accept-invite', token.token);
    await committed(this.db.$client);
    const outcome = await this.mailer.send(
      inviteMessage(user.email, { name: user.name, inviter: ctx.caller.name ?? ctx.caller.email, link, expiresAt: token.expiresAt }),
    );
    return { inviteEmailSent: outcome === 'sent', inviteUrl: outcome === 'sent' ? null : link };
  }

  async invite(ctx: RequestContext, body: InviteBody) {
    const { caller } = ctx;
    const target = this.inviteTarget(ctx, body);
    const role = this.roles.requireAssignable(caller, body.roleId, target);
    const link = this.linkValues(caller, target, body);
    const email = body.email.trim().toLowerCase();
    const { user, token } = this.db.$client.transaction(() => {
      let user = userByEmail(this.db, email);
      if (user) {
        const membership = this.directory.membershipOf(user.id);
        if (membership && sameTenant(membership, target)) throw conflict('User is already a member', 'ALREADY_MEMBER');
        if (membership || user.isSystemAdmin) {
          throw conflict('User already belongs to another partner or organization', 'USER_IN_OTHER_TENANT');
        }
        if (user.status === 'disabled') throw conflict('User account is disabled', 'USER_DISABLED');
      } else {
        user = insertRow(this.db, users, { email, name: body.name, status: 'invited' });
      }
      this.insertLink(this.db, user.id, role.id, target, link);
      // An account that already exists and is active (a standalone user) just joins; no link is needed.
      const token = user.status === 'invited' ? issueUserToken(this.db, user.id, 'invite', this.inviteTtlMs()) : null;
      recordAudit(this.db, ctx, {
        action: 'user.invite',
        resourceType: 'user',
        resourceId: user.id,
        resourceName: email,
        orgId: target.orgId,
        partnerId: target.partnerId,
        details: { roleId: role.id, roleName: role.name, scope: target.kind, ...link, existingAccount: user.status !== 'invited' },
      });
      return { user, token };
    })();
    const delivery = token ? await this.deliverInvite(ctx, user, token) : { inviteEmailSent: false, inviteUrl: null };
    return { id: user.id, email: user.email, name: user.name, status: user.status, roleId: role.id, ...delivery };
  }

  async resendInvite(ctx: RequestContext, body: z.infer<typeof ResendInviteSchema>) {
    const userId = body.userId ?? userByEmail(this.db, (body.email ?? '').trim().toLowerCase())?.id;
    if (!userId) throw notFound('User not found');
    const member = this.requireMember(ctx.caller, userId);
    const { user, membership } = member;
    if (user.status !== 'invited') throw badRequest('Only invited users can be sent a new invitation', 'NOT_INVITED');
    // The new link comes back to the caller when mail is not configured: accepting it signs in as the user.
    this.assertNotBeyond(ctx.caller, member);
    const token = this.db.$client.transaction(() => {
      const issued = issueUserToken(this.db, user.id, 'invite', this.inviteTtlMs());
      this.auditUser(ctx, 'user.invite.resend', user, membership);
      return issued;
    })();
    return { id: user.id, email: user.email, ...(await this.deliverInvite(ctx, user, token)) };
  }

  // ---- changes ----

  update(ctx: RequestContext, id: string, body: z.infer<typeof UserUpdateSchema>) {
    if (body.name === undefined && body.status === undefined) throw badRequest('No updates provided', 'NO_UPDATES');
    const { caller } = ctx;
    const member = this.db.$client.transaction(() => {
      const { user, membership } = this.requireMember(caller, id);
      if (body.status !== undefined && body.status !== user.status) {
        if (user.id === caller.userId) throw forbidden('You cannot disable your own account', 'SELF_DISABLE');
        // 01 §3: disabling disables, an invitation too (that is how it is withdrawn); only accepting activates it.
        if (user.status === 'invited' && body.status === 'active') {
          throw badRequest('Invited users become active by accepting their invitation', 'USER_INVITED');
        }
        this.assertNotBeyond(caller, { user, membership });
      }
      const changes: Partial<typeof users.$inferInsert> = { updatedAt: new Date().toISOString() };
      if (body.name !== undefined) changes.name = body.name;
      if (body.status !== undefined) changes.status = body.status;
      const updated = updateRow(this.db, users, user, changes);
      // The row was read in this transaction (requireMember): it is there.
      if (!updated) throw notFound('User not found');
      const disabled = user.status !== 'disabled' && updated.status === 'disabled';
      const withdrawn = disabled && user.status === 'invited';
      // 01 §3 user: disabling ends every session of the account (and a pending invitation) in the same transaction.
      if (disabled) this.sessions.revokeAllForUser(this.db, id);
      if (withdrawn) revokeUserTokens(this.db, id, 'invite');
      const action = disabled ? 'user.disable' : user.status === 'disabled' && updated.status === 'active' ? 'user.enable' : 'user.update';
      this.auditUser(ctx, action, updated, membership, {
        changes: Object.keys(changes).filter((k) => k !== 'updatedAt'),
        ...(disabled ? { sessionsRevoked: true } : {}),
        ...(withdrawn ? { invitationWithdrawn: true } : {}),
      });
      return { user: updated, membership };
    })();
    return this.view(member);
  }

  remove(ctx: RequestContext, id: string): { success: true } {
    const { caller } = ctx;
    return this.db.$client.transaction(() => {
      const member = this.requireMember(caller, id);
      if (member.user.id === caller.userId) throw forbidden('You cannot remove yourself', 'SELF_REMOVE');
      const membership = this.requireMembership(member);
      this.assertNotBeyond(caller, member);
      this.directory.removeLink(this.db, id, membership);
      // Without a membership the account reaches nothing; its sessions and pending invitation end now.
      this.sessions.revokeAllForUser(this.db, id);
      revokeUserTokens(this.db, id, 'invite');
      this.auditUser(ctx, 'user.remove', member.user, membership, { scope: membership.kind, roleId: membership.roleId });
      return { success: true as const };
    })();
  }

  assignRole(ctx: RequestContext, id: string, roleId: string) {
    const { caller } = ctx;
    const member = this.db.$client.transaction(() => {
      const member = this.requireMember(caller, id);
      if (member.user.id === caller.userId) throw forbidden('You cannot change your own role', 'SELF_ROLE_CHANGE');
      const membership = this.requireMembership(member);
      const role = this.roles.requireAssignable(caller, roleId, targetOf(membership));
      this.assertNotBeyond(caller, member);
      this.directory.setRole(this.db, id, membership, role.id);
      const previous = roleNames(this.db, [membership.roleId]).get(membership.roleId) ?? null;
      const details = { oldRoleId: membership.roleId, oldRoleName: previous, newRoleId: role.id, newRoleName: role.name };
      this.auditUser(ctx, 'user.permission.change', member.user, membership, details);
      return { user: member.user, membership: { ...membership, roleId: role.id } };
    })();
    return this.view(member);
  }

  /** An administrator's password-reset link for a user (docs/api-notes.md): mailed, or returned when the
   * mail did not go out, so an air-gapped install can still reset a password. */
  async issuePasswordReset(ctx: RequestContext, id: string) {
    const { caller } = ctx;
    const member = this.requireMember(caller, id);
    const { user, membership } = member;
    if (user.status === 'invited') throw badRequest('Invited users get a new invitation instead (POST /users/resend-invite)', 'USER_INVITED');
    if (user.status === 'disabled') throw badRequest('User is disabled', 'USER_DISABLED');
    this.assertNotBeyond(caller, member);
    const token = this.db.$client.transaction(() => {
      const issued = issueUserToken(this.db, user.id, 'password_reset', this.config.links.passwordResetTtlMinutes * 60_000);
      this.auditUser(ctx, 'user.password.reset.request', user, membership, { byAdministrator: true });
      return issued;
    })();
    const link = tokenLink(publicBaseUrl(this.config), 'reset-password', token.token);
    await committed(this.db.$client);
    const outcome = await this.mailer.send(passwordResetMessage(user.email, { name: user.name, link, expiresAt: token.expiresAt }));
    return {
      id: user.id,
      email: user.email,
      resetEmailSent: outcome === 'sent',
      resetUrl: outcome === 'sent' ? null : link,
      expiresAt: token.expiresAt,
    };
  }

  // ---- for the access-reviews module ----

  /**
   * The refusals of remove for a removal decided elsewhere (an access review's revoked item, removed when the
   * review completes): not oneself (403 SELF_REMOVE) and no user the caller may not manage (assertNotBeyond).
   * An API key is not the user who created it (its userId is for attribution only): the self rule is a session's.
   */
  assertRemovable(caller: Caller, member: Member): void {
    if (caller.kind === 'user' && member.user.id === caller.userId) throw forbidden('You cannot remove yourself', 'SELF_REMOVE');
    this.assertNotBeyond(caller, member);
  }
}
