import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminToken,
  cliUser,
  type CliUser,
  E2E_TIMEOUT_MS,
  type E2eServer,
  http,
  login,
  startServer,
} from '../helpers/cli.js';
import { createTenant } from '../helpers/fixtures.js';
import { enableMfa } from '../helpers/mfa.js';

const PASSWORD = 'Invitee-Passw0rd-1!';

interface Named {
  id: string;
  name: string;
}

/** The token of an acceptance link, as the person invited would click it. */
function tokenOf(url: string): string {
  const token = new URL(url).searchParams.get('token');
  if (!token) throw new Error(`no token in ${url}`);
  return token;
}

describe('e2e: users and roles (01 §4.4; CLI.md "Grammar", "Safety")', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  let admin: CliUser;
  let token: string;
  let roles: Record<string, string>;
  /** Each test's own partner, and an e-mail address in its own domain. */
  const people = async () => {
    const { partnerId, slug } = await createTenant(server.url, token, 'people');
    return { partnerId, at: (name: string) => `${name}@${slug}.test` };
  };
  /** `svc users invite` into the partner with a built-in role. */
  const inviteByCli = (partnerId: string, email: string, role: string) =>
    admin.json<{ id: string; inviteUrl: string }>([
      'users',
      'invite',
      '--partner-id',
      partnerId,
      '--email',
      email,
      '--name',
      email.split('@')[0] ?? email,
      '--role-id',
      roles[role] ?? '',
    ]);

  beforeAll(async () => {
    server = await startServer();
    admin = cliUser();
    token = await adminToken(server.url);
    const signedIn = await login(admin, server.url);
    if (signedIn.exitCode !== 0) throw new Error(signedIn.stderr);
    await enableMfa(admin);
    const list = await admin.json<Named[]>(['roles', 'list']);
    roles = Object.fromEntries(list.map((r) => [r.name, r.id]));
  });
  afterAll(async () => {
    admin?.cleanup();
    await server?.stop();
  });

  it('01§4.4 invite without a mail service: the output carries inviteUrl; accepting it makes the user active in users list', async () => {
    const { partnerId, at } = await people();
    const inviteViewer = (email: string, name: string, output: string) =>
      admin.run(['users', 'invite', '--partner-id', partnerId, '--email', at(email), '--name', name, '--role-id', roles['Partner Viewer'] ?? '', '--output', output]);
    const invited = await inviteViewer('ada', 'Ada', 'json');
    expect(invited.exitCode).toBe(0);
    const body = JSON.parse(invited.stdout);
    expect(body).toMatchObject({
      email: at('ada'),
      status: 'invited',
      inviteEmailSent: false,
      inviteUrl: expect.stringContaining('accept-invite?token='),
    });
    expect(invited.stderr).toContain(`pass the inviteUrl on to ${at('ada')}`);

    const table = await inviteViewer('bob', 'Bob', 'table');
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toMatch(/^inviteUrl\s+http\S+accept-invite\?token=/m);

    const accepted = await http(server.url, 'POST', '/auth/accept-invite', {
      body: { token: tokenOf(body.inviteUrl), password: PASSWORD },
    });
    expect(accepted.status).toBe(200);
    const users = await admin.json<{ email: string; status: string; roleName: string }[]>([
      'users',
      'list',
      '--partner-id',
      partnerId,
    ]);
    expect(users.map((u) => [u.email, u.status, u.roleName])).toEqual([
      [at('ada'), 'active', 'Partner Viewer'],
      [at('bob'), 'invited', 'Partner Viewer'],
    ]);
    const invitedOnly = await admin.json<{ email: string }[]>([
      'users',
      'list',
      '--partner-id',
      partnerId,
      '--status',
      'invited',
    ]);
    expect(invitedOnly.map((u) => u.email)).toEqual([at('bob')]);
  });

  it('01§4.4 resend-invite by e-mail gives a new link; get, update, assign-role; remove confirms', async () => {
    const { partnerId, at } = await people();
    await inviteByCli(partnerId, at('bob'), 'Partner Viewer');
    const [bob] = await admin.json<Named[]>(['users', 'list', '--partner-id', partnerId, '--search', 'bob']);
    expect(bob).toBeDefined();
    const id = bob?.id ?? '';
    const resent = await admin.json(['users', 'resend-invite', '--email', at('bob')]);
    expect(resent).toMatchObject({ id, inviteEmailSent: false, inviteUrl: expect.stringContaining('token=') });
    expect((await admin.run(['users', 'resend-invite'])).exitCode).toBe(2);

    expect(await admin.json(['users', 'get', id])).toMatchObject({
      id,
      email: at('bob'),
      partnerId,
      scope: 'partner',
    });
    expect(await admin.json(['users', 'update', id, '--name', 'Robert'])).toMatchObject({ id, name: 'Robert' });
    const reRoled = await admin.json(['users', 'assign-role', id, '--role-id', roles['Partner Technician'] ?? '']);
    expect(reRoled).toMatchObject({ id, roleName: 'Partner Technician' });

    const refused = await admin.run(['users', 'remove', id]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect((await admin.run(['users', 'remove', id, '--yes'])).exitCode).toBe(0);
    // The account remains (a system administrator still sees it); the partner no longer lists it.
    const left = await admin.json<Named[]>(['users', 'list', '--partner-id', partnerId]);
    expect(left.map((u) => u.id)).not.toContain(id);
  });

  it('01§4.4 roles create with --permission, a child with --permissions-file, effective-permissions shows where each comes from', async () => {
    const { partnerId } = await people();
    const parent = await admin.json([
      'roles',
      'create',
      '--partner-id',
      partnerId,
      '--name',
      'Helpdesk',
      '--permission',
      'devices:read',
      '--permission',
      'sites:read,alerts:read',
    ]);
    expect(parent).toMatchObject({ name: 'Helpdesk', scope: 'partner', isSystem: false, partnerId });
    expect(
      parent.permissions.map((p: { resource: string; action: string }) => `${p.resource}:${p.action}`).sort(),
    ).toEqual(['alerts:read', 'devices:read', 'sites:read']);

    const file = path.join(admin.home, 'child.yaml');
    fs.writeFileSync(file, '- devices:execute\n- resource: scripts\n  action: read\n');
    const child = await admin.json([
      'roles',
      'create',
      '--partner-id',
      partnerId,
      '--name',
      'Helpdesk L2',
      '--parent-role-id',
      parent.id,
      '--permissions-file',
      file,
    ]);
    expect(child).toMatchObject({ parentRoleId: parent.id });
    expect(child.permissions).toHaveLength(2);

    const table = await admin.run(['roles', 'effective-permissions', child.id, '--output', 'table']);
    expect(table.exitCode).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header?.split(/\s+/)).toEqual(['resource', 'action', 'inherited', 'sourceRoleName']);
    expect(rows.map((r) => r.split(/\s{2,}/))).toEqual(
      expect.arrayContaining([
        ['devices', 'execute', 'false', 'Helpdesk L2'],
        ['devices', 'read', 'true', 'Helpdesk'],
      ]),
    );
    expect(rows).toHaveLength(5);
    expect(table.stderr).toContain('Helpdesk L2 → Helpdesk');
    const json = await admin.json(['roles', 'effective-permissions', child.id]);
    expect(json.inheritanceChain.map((r: Named) => r.name)).toEqual(['Helpdesk L2', 'Helpdesk']);
    const quiet = await admin.run(['roles', 'effective-permissions', child.id, '-q']);
    expect(quiet.stdout.split('\n').sort()).toEqual([
      'alerts:read',
      'devices:execute',
      'devices:read',
      'scripts:read',
      'sites:read',
    ]);
  });

  it('01§4.4 roles clone, update (permissions replaced, also from `roles get -o json`), users, permissions, delete', async () => {
    const { partnerId, at } = await people();
    const viewer = await inviteByCli(partnerId, at('ada'), 'Partner Viewer');
    const helpdesk = roles['Partner Technician'] ?? '';
    const clone = await admin.json([
      'roles',
      'clone',
      helpdesk,
      '--name',
      'Technician copy',
      '--partner-id',
      partnerId,
    ]);
    const original = await admin.json(['roles', 'get', helpdesk]);
    expect(clone).toMatchObject({ name: 'Technician copy', isSystem: false, partnerId });
    expect(clone.permissions).toEqual(expect.arrayContaining(original.permissions));
    expect(clone.permissions).toHaveLength(original.permissions.length);

    const updated = await admin.json([
      'roles',
      'update',
      clone.id,
      '--permission',
      'devices:read',
      '--description',
      'Narrowed',
    ]);
    expect(updated).toMatchObject({ description: 'Narrowed', permissions: [{ resource: 'devices', action: 'read' }] });
    const file = path.join(admin.home, 'role.json');
    fs.writeFileSync(file, JSON.stringify(original));
    const restored = await admin.json(['roles', 'update', clone.id, '--permissions-file', file]);
    expect(restored.permissions).toHaveLength(original.permissions.length);

    const table = await admin.run(['roles', 'get', clone.id, '--output', 'table']);
    expect(table.stdout).toMatch(/^permissions\s+\S+:\S+ \S+:\S+/m);

    const [holders, vocabulary, quiet] = await Promise.all([
      admin.json(['roles', 'users', roles['Partner Viewer'] ?? '']),
      admin.json(['roles', 'permissions']),
      admin.run(['roles', 'permissions', '-q']),
    ]);
    // Viewers of other tests' partners are listed too (a system administrator sees every partner).
    expect(holders.map((u: { id: string }) => u.id)).toContain(viewer.id);
    expect(vocabulary.matrix.length).toBeGreaterThan(0);
    expect(quiet.stdout.split('\n')).toContain('devices:read');

    const bad = await admin.run(['roles', 'update', clone.id, '--permission', 'devices']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('resource:action');
    expect((await admin.run(['roles', 'delete', clone.id])).exitCode).toBe(2);
    expect((await admin.run(['roles', 'delete', clone.id, '--yes'])).exitCode).toBe(0);
    expect((await admin.run(['roles', 'get', clone.id])).exitCode).toBe(5);
    const system = await admin.run(['roles', 'delete', helpdesk, '--yes']);
    expect(system.exitCode).toBe(4);
  });
});
