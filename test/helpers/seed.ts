import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import {
  organizationUsers,
  organizations,
  partnerUsers,
  partners,
  rolePermissions,
  roles,
  sites,
  users,
} from '../../src/server/db/schema/index.js';
import { BUILTIN_ROLES } from '../../src/server/modules/identity/builtin-roles.js';
import { hashPassword } from '../../src/server/security/passwords.js';
import { loginAs, type TestApp } from './server.js';

/** Tenants and users written straight into a TestApp's database (there is no invite endpoint to use yet).
 * Nothing here writes audit entries: tests that count them start from what they did themselves. */

type PartnerRow = typeof partners.$inferSelect;
type OrgRow = typeof organizations.$inferSelect;
type SiteRow = typeof sites.$inferSelect;

function roleId(name: string): string {
  const role = BUILTIN_ROLES.find((r) => r.name === name);
  if (!role) throw new Error(`no built-in role named ${name}`);
  return role.id;
}

/** The built-in role ids (04 wire notes "Users and roles"). */
export const ROLES = {
  partnerAdmin: roleId('Partner Admin'),
  partnerTechnician: roleId('Partner Technician'),
  partnerViewer: roleId('Partner Viewer'),
  orgAdmin: roleId('Org Admin'),
  orgTechnician: roleId('Org Technician'),
  orgViewer: roleId('Org Viewer'),
} as const;

export const SEED_PASSWORD = 'Seed-Passw0rd-1';

// scrypt is slow on purpose; seeding many users with one password hashes it once per test file.
const hashes = new Map<string, Promise<string>>();
function hashOnce(password: string): Promise<string> {
  let hash = hashes.get(password);
  if (!hash) {
    hash = hashPassword(password);
    hashes.set(password, hash);
  }
  return hash;
}

export function seedPartner(
  t: TestApp,
  values: { name: string; slug: string } & Partial<Omit<typeof partners.$inferInsert, 'name' | 'slug'>>,
): PartnerRow {
  return t.db
    .insert(partners)
    .values({ status: 'active', settings: {}, ...values })
    .returning()
    .get();
}

export function seedOrg(
  t: TestApp,
  partnerId: string,
  values: { name: string; slug: string } & Partial<
    Omit<typeof organizations.$inferInsert, 'name' | 'slug' | 'partnerId'>
  >,
): OrgRow {
  return t.db
    .insert(organizations)
    .values({ settings: {}, ...values, partnerId })
    .returning()
    .get();
}

export function seedSite(
  t: TestApp,
  orgId: string,
  values: { name: string } & Partial<Omit<typeof sites.$inferInsert, 'name' | 'orgId'>>,
): SiteRow {
  return t.db
    .insert(sites)
    .values({ settings: {}, ...values, orgId })
    .returning()
    .get();
}

export interface SeedUserOptions {
  email: string;
  password?: string;
  name?: string;
  status?: 'active' | 'invited' | 'disabled';
  systemAdmin?: boolean;
  partner?: { partnerId: string; roleId?: string; orgAccess: 'all' | 'selected' | 'none'; orgIds?: string[] };
  org?: { orgId: string; roleId?: string; siteIds?: string[] | null; deviceGroupIds?: string[] | null };
  /** How to get the token: a real password login (default), a session minted directly (fast, no scrypt, no
   * login throttle), or none. */
  login?: 'password' | 'mint' | false;
  /** With login 'mint': the session's mfa claim. */
  mfa?: boolean;
}

export interface SeededUser {
  id: string;
  email: string;
  password: string;
  /** The access token; empty when login is false. */
  token: string;
}

/** Inserts a user and its partner or organization link (built-in roles by default: Partner Admin and Org
 * Admin), then signs in. */
export async function seedUser(t: TestApp, options: SeedUserOptions): Promise<SeededUser> {
  const password = options.password ?? SEED_PASSWORD;
  const passwordHash = await hashOnce(password);
  const email = options.email.toLowerCase();
  const user = t.db.$client.transaction(() => {
    const row = t.db
      .insert(users)
      .values({
        email,
        name: options.name ?? email.split('@')[0] ?? email,
        passwordHash,
        status: options.status ?? 'active',
        isSystemAdmin: options.systemAdmin ?? false,
      })
      .returning()
      .get();
    if (options.partner) {
      t.db
        .insert(partnerUsers)
        .values({
          partnerId: options.partner.partnerId,
          userId: row.id,
          roleId: options.partner.roleId ?? ROLES.partnerAdmin,
          orgAccess: options.partner.orgAccess,
          orgIds: options.partner.orgIds ?? null,
        })
        .run();
    }
    if (options.org) {
      t.db
        .insert(organizationUsers)
        .values({
          orgId: options.org.orgId,
          userId: row.id,
          roleId: options.org.roleId ?? ROLES.orgAdmin,
          siteIds: options.org.siteIds ?? null,
          deviceGroupIds: options.org.deviceGroupIds ?? null,
        })
        .run();
    }
    return row;
  })();
  const login = options.login ?? 'password';
  let token = '';
  if (login === 'password') token = await loginAs(t, email, password);
  else if (login === 'mint') token = await mintToken(t, user.id, { mfa: options.mfa ?? false });
  return { id: user.id, email, password, token };
}

/** An access token for a user through the app's own SessionService, as a completed sign-in would issue
 * (with `mfa: true` for MFA-gated routes while the MFA endpoints are not available to tests). */
export async function mintToken(t: TestApp, userId: string, options: { mfa?: boolean } = {}): Promise<string> {
  const issued = await t.services.sessions.issue(userId, options.mfa ?? false, { ip: null, userAgent: null, signInMethod: 'password' });
  return issued.accessToken;
}

/** The system administrator created on first start. */
export function systemAdminId(t: TestApp): string {
  const admin = t.db.select({ id: users.id }).from(users).where(eq(users.isSystemAdmin, true)).get();
  if (!admin) throw new Error('no system administrator');
  return admin.id;
}

/** A token of the system administrator without a password round trip. */
export async function adminToken(t: TestApp, options: { mfa?: boolean } = {}): Promise<string> {
  return mintToken(t, systemAdminId(t), options);
}

export type WorldCaller = 'system' | 'aAdmin' | 'aTech' | 'aSelAdmin' | 'aNone' | 'bAdmin' | 'orgUser' | 'siteUser';

export interface World {
  partnerA: PartnerRow;
  partnerB: PartnerRow;
  orgA1: OrgRow;
  orgA2: OrgRow;
  orgB1: OrgRow;
  siteA1a: SiteRow;
  siteA1b: SiteRow;
  siteA2a: SiteRow;
  siteB1a: SiteRow;
  users: Record<WorldCaller, SeededUser>;
  tokens: Record<WorldCaller, string>;
}

/**
 * Two partners and the caller shapes of 01 §1 and §2.6:
 * - partner A (orgs "Alpha One" A1 with sites A1a and A1b, "Alpha Two" A2 with site A2a) and partner B
 *   ("Bravo One" B1 with site B1a);
 * - system: the system administrator; aAdmin: Partner Admin of A with orgAccess all; aTech: Partner
 *   Technician of A with orgAccess selected [A1]; aSelAdmin: Partner Admin of A with orgAccess selected [A1];
 *   aNone: Partner Admin of A with orgAccess none; bAdmin: Partner Admin of B; orgUser: Org Admin of A1;
 *   siteUser: Org Admin of A1 restricted to site A1a.
 * Tokens are minted (no password round trip) with the given mfa claim.
 */
export async function seedWorld(t: TestApp, options: { mfa?: boolean } = {}): Promise<World> {
  const partnerA = seedPartner(t, { name: 'Partner A', slug: 'partner-a' });
  const partnerB = seedPartner(t, { name: 'Partner B', slug: 'partner-b' });
  const orgA1 = seedOrg(t, partnerA.id, { name: 'Alpha One', slug: 'alpha-one' });
  const orgA2 = seedOrg(t, partnerA.id, { name: 'Alpha Two', slug: 'alpha-two' });
  const orgB1 = seedOrg(t, partnerB.id, { name: 'Bravo One', slug: 'bravo-one' });
  const siteA1a = seedSite(t, orgA1.id, { name: 'A1 HQ' });
  const siteA1b = seedSite(t, orgA1.id, { name: 'A1 Branch' });
  const siteA2a = seedSite(t, orgA2.id, { name: 'A2 HQ' });
  const siteB1a = seedSite(t, orgB1.id, { name: 'B1 HQ' });
  const mint = { login: 'mint' as const, mfa: options.mfa ?? false };
  const adminId = systemAdminId(t);
  const users: Record<WorldCaller, SeededUser> = {
    system: {
      id: adminId,
      email: 'admin',
      password: '',
      token: await mintToken(t, adminId, { mfa: options.mfa ?? false }),
    },
    aAdmin: await seedUser(t, {
      email: 'a-admin@a.test',
      partner: { partnerId: partnerA.id, orgAccess: 'all' },
      ...mint,
    }),
    aTech: await seedUser(t, {
      email: 'a-tech@a.test',
      partner: { partnerId: partnerA.id, roleId: ROLES.partnerTechnician, orgAccess: 'selected', orgIds: [orgA1.id] },
      ...mint,
    }),
    aSelAdmin: await seedUser(t, {
      email: 'a-sel@a.test',
      partner: { partnerId: partnerA.id, orgAccess: 'selected', orgIds: [orgA1.id] },
      ...mint,
    }),
    aNone: await seedUser(t, {
      email: 'a-none@a.test',
      partner: { partnerId: partnerA.id, orgAccess: 'none' },
      ...mint,
    }),
    bAdmin: await seedUser(t, {
      email: 'b-admin@b.test',
      partner: { partnerId: partnerB.id, orgAccess: 'all' },
      ...mint,
    }),
    orgUser: await seedUser(t, { email: 'org-admin@a1.test', org: { orgId: orgA1.id }, ...mint }),
    siteUser: await seedUser(t, {
      email: 'site-admin@a1.test',
      org: { orgId: orgA1.id, siteIds: [siteA1a.id] },
      ...mint,
    }),
  };
  const tokens = Object.fromEntries(Object.entries(users).map(([k, u]) => [k, u.token])) as Record<WorldCaller, string>;
  return { partnerA, partnerB, orgA1, orgA2, orgB1, siteA1a, siteA1b, siteA2a, siteB1a, users, tokens };
}

/** A custom role owned by a partner or an organization with exactly these permissions (`resource:action`),
 * written straight into the database; a fresh name unless one is given. */
export function seedRole(
  t: TestApp,
  options: { scope: 'partner' | 'organization'; partnerId?: string | null; orgId?: string | null; permissions: readonly string[]; name?: string },
): string {
  const { scope, permissions } = options;
  const role = t.db
    .insert(roles)
    .values({ name: options.name ?? `custom-${randomUUID().slice(0, 8)}`, scope, partnerId: options.partnerId ?? null, orgId: options.orgId ?? null })
    .returning()
    .get();
  for (const p of new Set(permissions)) {
    const [resource = '*', action = '*'] = p.split(':');
    t.db.insert(rolePermissions).values({ roleId: role.id, resource, action }).run();
  }
  return role.id;
}

/** A custom organization role with exactly these permissions (the built-in Org Admin cannot write keys). */
export function seedOrgRole(t: TestApp, orgId: string, permissions: string[], name = `custom-${permissions.join('+')}`): string {
  return seedRole(t, { scope: 'organization', orgId, permissions, name });
}
