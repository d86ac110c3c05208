import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { systemContext } from '../../src/server/context.js';
import { devices } from '../../src/server/db/schema/index.js';
import { type TestApp } from '../helpers/server.js';
import { type World } from '../helpers/seed.js';

describe('agent inventory (issue 13, 05 wire notes "4.5" field list)', () => {
  let t: TestApp, w: World;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  function enroll(hostname: string, extra: Record<string, unknown> = {}) {
    const key = t.services.enrollmentKeys.create(systemContext(), { orgId: w.orgA1.id, name: hostname, maxUsage: 1 });
    return t.services.devices.enroll(systemContext(), { enrollmentKey: key.key, hostname, osType: 'windows', osVersion: '10', architecture: 'x64', agentVersion: '1.0.0', ...extra });
  }

  it('02§4.5 the heartbeat stores hardware, network, metrics, OS, role and software into queryable columns', async () => {
    const a = enroll('inv-1', { hardwareInfo: { manufacturer: 'Dell', cpuCores: 8 } });
    expect(t.db.select().from(devices).where(eq(devices.id, a.deviceId)).get()).toMatchObject({ hwManufacturer: 'Dell', hwCpuCores: 8 });
    const res = await t.call('POST', `/api/v1/agents/${a.agentId}/heartbeat`, {
      token: a.authToken,
      remoteAddress: '10.1.2.3',
      body: {
        osVersion: '11',
        osBuild: '22631',
        uptimeSeconds: 3600,
        isHeadless: true,
        deviceRole: 'server',
        watchdogStatus: 'connected',
        hardwareInfo: { manufacturer: 'Lenovo', model: 'T14', serialNumber: 'SN1', cpuModel: 'Ryzen', gpuModel: 'Radeon', cpuCores: 16, ramTotalMb: 32768, diskTotalGb: 512, bios: 'x' },
        networkInfo: [{ name: 'lo' }, { name: 'eth0', ipAddress: '192.168.1.5', macAddress: 'aa:bb', publicIp: '203.0.113.9' }],
        software: [{ name: 'Backup Agent', version: '2' }, { name: 'backup agent' }],
        pendingPatchCount: 3,
        rebootRequired: true,
        metrics: { cpuPercent: 12.5, ramPercent: 40, diskPercent: 91, other: 'kept' },
      },
    });
    expect(res.status).toBe(200);
    const row = t.db.select().from(devices).where(eq(devices.id, a.deviceId)).get();
    expect(row).toMatchObject({
      osVersion: '11', osBuild: '22631', uptimeSeconds: 3600, isHeadless: true, deviceRole: 'server', watchdogStatus: 'connected',
      hwManufacturer: 'Lenovo', hwModel: 'T14', hwSerialNumber: 'SN1', hwCpuModel: 'Ryzen', hwGpuModel: 'Radeon', hwCpuCores: 16, hwRamTotalMb: 32768, hwDiskTotalGb: 512,
      netIpAddress: '192.168.1.5', netMacAddress: 'aa:bb', netPublicIp: '203.0.113.9', lastSeenIp: '10.1.2.3',
      softwareNames: ['backup agent'], pendingPatchCount: 3, rebootRequired: true, cpuPercent: 12.5, ramPercent: 40, diskPercent: 91,
    });
    expect(row?.hardwareInfo).toMatchObject({ bios: 'x' });
    expect(row?.lastMetrics).toMatchObject({ other: 'kept' });
    // An omitted field keeps its stored value; a bad role is a 400.
    expect((await t.call('POST', `/api/v1/agents/${a.agentId}/heartbeat`, { token: a.authToken, body: {} })).status).toBe(200);
    expect(t.db.select().from(devices).where(eq(devices.id, a.deviceId)).get()).toMatchObject({ hwModel: 'T14', deviceRole: 'server' });
    expect((await t.call('POST', `/api/v1/agents/${a.agentId}/heartbeat`, { token: a.authToken, body: { deviceRole: 'toaster' } })).status).toBe(400);
  });

  it('02§4.5 each heartbeat writes the columns it reports as the driver stores them: a missing field as NULL, a false flag as 0, JSON as text', async () => {
    const a = enroll('inv-2', { hardwareInfo: { manufacturer: 'Dell', model: 'XPS', cpuCores: 8 } });
    const raw = () =>
      t.db.$client
        .prepare('SELECT hw_manufacturer, hw_model, hw_cpu_cores, is_headless, reboot_required, hardware_info, last_metrics, cpu_percent, typeof(hw_model) AS model_type FROM devices WHERE id = ?')
        .get(a.deviceId) as Record<string, unknown>;
    const beat = async (body: Record<string, unknown>) =>
      expect((await t.call('POST', `/api/v1/agents/${a.agentId}/heartbeat`, { token: a.authToken, body })).status).toBe(200);
    // Hardware without a model: the flattened column is cleared (SQL NULL, not the text "null").
    await beat({ hardwareInfo: { manufacturer: 'HP' }, isHeadless: false, rebootRequired: false });
    expect(raw()).toMatchObject({ hw_manufacturer: 'HP', hw_model: null, model_type: 'null', hw_cpu_cores: null, is_headless: 0, reboot_required: 0, hardware_info: '{"manufacturer":"HP"}' });
    // Another set of columns: only those change.
    await beat({ metrics: { cpuPercent: 5 }, isHeadless: true });
    expect(raw()).toMatchObject({ hw_manufacturer: 'HP', is_headless: 1, reboot_required: 0, last_metrics: '{"cpuPercent":5}', cpu_percent: 5 });
    await beat({ metrics: { ramPercent: 7 } });
    expect(raw()).toMatchObject({ cpu_percent: null, last_metrics: '{"ramPercent":7}', is_headless: 1 });
  });
});
