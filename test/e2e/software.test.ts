import { describe, expect, it } from 'vitest';
import { E2E_TIMEOUT_MS, httpCaller } from '../helpers/cli.js';
import { createTenant, invitePerson, sharedServer } from '../helpers/fixtures.js';
import { SimulatedAgent } from '../helpers/simulated-agent.js';

/** svc software … against a real server process, with a simulated Windows agent over HTTP (03 §4.3, CLI.md). */
describe('e2e: svc software catalog, versions, deployments and inventory (03 §4.3)', { timeout: E2E_TIMEOUT_MS * 2 }, () => {
  const shared = sharedServer();

  async function setUp(prefix: string) {
    const tenant = await createTenant(shared.url, shared.token, prefix);
    const person = await invitePerson(shared.url, shared.token, tenant.partnerId);
    const cli = shared.track(person.cli);
    const agent = await SimulatedAgent.enroll(httpCaller(shared.url), person.token, tenant.orgId, { hostname: `${prefix}-pc`, osType: 'windows' });
    const item = await cli.json([
      'software', 'catalog', 'create', '--org-id', tenant.orgId, '--name', '7-Zip', '--vendor', 'Igor Pavlov',
      '--category', 'compression', '--platforms', 'windows', '--tags', 'archive,zip',
    ]);
    return { tenant, cli, agent, item };
  }

  it('03§4.3 catalog create, version create (becomes latest), get with versionCount, list, search, update, delete', async () => {
    const { cli, item } = await setUp('swcat');
    expect(item).toMatchObject({ name: '7-Zip', category: 'compression', platforms: ['windows'], tags: ['archive', 'zip'], deprecated: false });
    const version = await cli.json([
      'software', 'versions', 'create', item.id, '--version', '24.08', '--release-date', '2024-08-11',
      '--download-url', 'https://files.example.test/7z2408-x64.msi', '--supported-platforms', 'windows', '--sha256', 'a'.repeat(64),
    ]);
    expect(version).toMatchObject({ version: '24.08', isLatest: true });
    expect(await cli.json(['software', 'catalog', 'get', item.id])).toMatchObject({ latestVersion: '24.08', versionCount: 1 });
    expect((await cli.json<{ version: string }[]>(['software', 'versions', 'list', item.id])).map((v) => v.version)).toEqual(['24.08']);
    expect((await cli.json<{ id: string }[]>(['software', 'catalog', 'list', '--search', 'ZIP'])).map((i) => i.id)).toContain(item.id);
    expect((await cli.json<{ id: string }[]>(['software', 'catalog', 'search', '--q', 'pavlov'])).map((i) => i.id)).toContain(item.id);
    const csv = await cli.run(['software', 'catalog', 'list', '--category', 'compression', '-o', 'csv', '--columns', 'name,latestVersion']);
    expect(csv.stdout.trim().split('\n')).toContain('7-Zip,24.08');
    expect(await cli.json(['software', 'catalog', 'update', item.id, '--deprecated'])).toMatchObject({ deprecated: true });
    const nothing = await cli.run(['software', 'catalog', 'update', item.id]);
    expect(nothing.exitCode).toBe(2);
    const refused = await cli.run(['software', 'catalog', 'delete', item.id]);
    expect(refused.exitCode).toBe(2); // no terminal, no --yes (CLI.md "Safety")
    expect(await cli.json(['software', 'catalog', 'delete', item.id, '--yes'])).toEqual({ success: true, id: item.id });
    expect((await cli.run(['software', 'catalog', 'get', item.id])).exitCode).toBe(5);
  });

  it('03§3 a deployment runs on the agent: pending → completed, results per device; a scheduled one cancels once (then exit 6)', async () => {
    const { cli, agent, item } = await setUp('swdep');
    await cli.json(['software', 'versions', 'create', item.id, '--version', '24.08', '--release-date', '2024-08-11', '--download-url', 'https://files.example.test/7z.msi', '--supported-platforms', 'windows']);
    const deployment = await cli.json(['software', 'deployments', 'create', '--software-id', item.id, '--action', 'install', '--device-ids', agent.deviceId, '--requested-by', 'ops@example.test']);
    expect(deployment).toMatchObject({ status: 'pending', action: 'install', version: '24.08', deviceIds: [agent.deviceId] });
    const ran = await agent.work(() => ({ status: 'completed', exitCode: 0, stdout: 'installed' }));
    expect(ran.map((c) => c.type)).toEqual(['install_software']);
    expect(await cli.json(['software', 'deployments', 'get', deployment.id])).toMatchObject({ status: 'completed' });
    const results = await cli.json<{ deviceId: string; status: string }[]>(['software', 'deployments', 'results', deployment.id]);
    expect(results).toEqual([expect.objectContaining({ deviceId: agent.deviceId, status: 'completed' })]);
    expect((await cli.json<{ id: string }[]>(['software', 'deployments', 'list', '--status', 'completed'])).map((d) => d.id)).toContain(deployment.id);

    const later = await cli.json(['software', 'deployments', 'create', '--software-id', item.id, '--action', 'update', '--device-ids', agent.deviceId, '--requested-by', 'ops', '--schedule-at', '2099-01-01T00:00:00Z']);
    expect(later.status).toBe('queued');
    expect(await cli.json(['software', 'deployments', 'cancel', later.id, '--reason', 'window moved'])).toMatchObject({ status: 'cancelled', cancelReason: 'window moved' });
    const again = await cli.run(['software', 'deployments', 'cancel', later.id]);
    expect(again.exitCode).toBe(6);
    expect(again.stderr).toContain('Deployment cannot be cancelled');
  });

  it('03§4.3 inventory from the heartbeat: list and get per device; uninstall one item (202, an uninstall deployment)', async () => {
    const { cli, agent, item } = await setUp('swinv');
    const beat = await agent.heartbeat({ software: [{ name: '7-Zip', version: '23.01', vendor: 'Igor Pavlov' }, { name: 'Notepad++', version: '8.6' }] });
    expect(beat.status, beat.text).toBe(200);
    const table = await cli.run(['software', 'inventory', 'get', agent.deviceId, '-o', 'csv', '--columns', 'name,version']);
    expect(table.stdout.trim().split('\n')).toEqual(['name,version', '7-Zip,23.01', 'Notepad++,8.6']);
    const listed = await cli.run(['software', 'inventory', 'list', '-o', 'csv', '--columns', 'deviceName,itemCount,software']);
    expect(listed.stdout).toContain('swinv-pc,2,7-Zip 23.01; Notepad++ 8.6');
    // JSON is the device entry as the API answers it; an item of a catalog name is linked to the catalog item.
    const entry = await cli.json<{ deviceId: string; items: { name: string; softwareId: string; catalogId: string | null }[] }>(['software', 'inventory', 'get', agent.deviceId]);
    expect(entry.deviceId).toBe(agent.deviceId);
    expect(entry.items.find((i) => i.name === '7-Zip')?.catalogId).toBe(item.id);
    const notepad = entry.items.find((i) => i.name === 'Notepad++');
    const uninstall = await cli.json(['software', 'inventory', 'uninstall', agent.deviceId, notepad?.softwareId ?? '', '--requested-by', 'ops', '--yes']);
    expect(uninstall).toMatchObject({ action: 'uninstall', deviceIds: [agent.deviceId] });
    expect((await agent.fetch()).map((c) => c.type)).toEqual(['uninstall_software']);
  });
});
