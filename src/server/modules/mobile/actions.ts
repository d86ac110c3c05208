import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { MobileActionSchema } from '../../../contract/mobile.js';
import type { RequestContext } from '../../context.js';
import { DomainError, badRequest, conflict, forbidden } from '../../errors.js';
import type { DeviceCommandsService } from '../device-commands/service.js';
import type { DeviceRow, DevicesService } from '../devices/service.js';
import { covers } from '../roles/permissions.js';
import type { ScriptsService } from '../scripts/service.js';

type Action = z.infer<typeof MobileActionSchema>;
const MAC = /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$/i;
/** The relay candidates looked at (online devices of the site the caller may see, most recently seen first). */
const RELAY_CANDIDATES = 50;

/** The MAC addresses the agent reported for the device (primary first), normalised to lower-case colons. */
function macsOf(device: DeviceRow): string[] {
  const raw = [device.netMacAddress, ...(device.networkInfo ?? []).map((i) => i.macAddress)];
  const macs = raw.filter((m): m is string => typeof m === 'string' && MAC.test(m)).map((m) => m.toLowerCase().replace(/-/g, ':'));
  return [...new Set(macs)].filter((m) => m !== '00:00:00:00:00:00');
}

/** The IPv4 network and broadcast address of the device's primary interface, when it reported a netmask. */
function networkOf(device: DeviceRow): { network: string | null; broadcast: string } {
  const primary = (device.networkInfo ?? []).find((i) => i.ipAddress === device.netIpAddress) ?? {};
  const ip = typeof device.netIpAddress === 'string' ? device.netIpAddress.split('.').map(Number) : [];
  const mask = typeof primary.subnetMask === 'string' ? primary.subnetMask.split('.').map(Number) : typeof primary.netmask === 'string' ? primary.netmask.split('.').map(Number) : [];
  const octet = (n: number | undefined) => n !== undefined && Number.isInteger(n) && n >= 0 && n <= 255;
  if (ip.length !== 4 || mask.length !== 4 || !ip.every(octet) || !mask.every(octet)) return { network: null, broadcast: '255.255.255.255' };
  const net = ip.map((o, i) => o & (mask[i] ?? 0));
  const bits = mask.reduce((n, o) => n + o.toString(2).replace(/0/g, '').length, 0);
  return { network: `${net.join('.')}/${bits}`, broadcast: ip.map((o, i) => (o & (mask[i] ?? 0)) | (~(mask[i] ?? 0) & 255)).join('.') };
}

/** 02 §4.6 actions on a managed device, through the device-commands and scripts services. */
export class MobileActions {
  constructor(
    private readonly devices: DevicesService,
    private readonly commands: DeviceCommandsService,
    private readonly scriptsOf: () => ScriptsService,
  ) {}

  run(ctx: RequestContext, deviceId: string, body: Action) {
    // What the action itself needs is checked first, as a route's permission is: a caller who may not run scripts
    // learns nothing of the device (403, not 404 or 409 DEVICE_OFFLINE).
    if (body.action === 'run_script' && !covers(ctx.caller.permissions, 'scripts:execute')) {
      throw forbidden('Insufficient permissions: scripts:execute', 'INSUFFICIENT_PERMISSIONS');
    }
    const device = this.devices.findVisible(ctx, deviceId);
    if (device.status === 'decommissioned') throw badRequest('Device is decommissioned', 'DEVICE_DECOMMISSIONED');
    if (body.action === 'wake') return { status: 202 as const, body: this.wake(ctx, device) };
    if (device.status !== 'online') throw conflict('Device is not online', 'DEVICE_OFFLINE');
    if (body.action === 'reboot') {
      const command = this.commands.create(ctx, device.id, { type: 'reboot' });
      return { status: 201 as const, body: { action: 'reboot' as const, commandId: command.id } };
    }
    return { status: 201 as const, body: this.runScript(ctx, device, body) };
  }

  /** 02 §4.6: an existing script within the caller's reach, for the device's organization and OS; a manual
   * execution record is created by the scripts service, whose command carries content, language, timeout, run-as. */
  private runScript(ctx: RequestContext, device: DeviceRow, body: Action) {
    if (body.scriptId === undefined) throw badRequest('scriptId is required for run_script', 'SCRIPT_ID_REQUIRED');
    const scripts = this.scriptsOf();
    const script = scripts.get(ctx, body.scriptId);
    if (!script.isSystem && script.orgId !== device.orgId) throw badRequest("Script does not belong to the device's organization", 'SCRIPT_OUT_OF_REACH');
    if (!script.osTypes.includes(device.osType)) throw badRequest(`Script does not support the device's OS (${device.osType})`, 'SCRIPT_OS_UNSUPPORTED');
    try {
      const result = scripts.execute(ctx, script.id, { deviceIds: [device.id], triggerType: 'manual', ...(body.parameters ? { parameters: body.parameters } : {}) }, { requireOnline: true });
      const [run] = result.executions;
      if (!run) throw badRequest(result.failures?.[0]?.error ?? 'The script could not be run', 'SCRIPT_NOT_RUN');
      return { action: 'run_script' as const, executionId: run.executionId, commandId: run.commandId };
    } catch (err) {
      // One device: the scripts service's per-device refusal is this request's error.
      if (err instanceof DomainError && err.code === 'NO_DEVICES_TARGETED') {
        const failures = err.extra?.failures;
        const first = Array.isArray(failures) ? (failures[0] as { error?: unknown } | undefined) : undefined;
        throw badRequest(typeof first?.error === 'string' ? first.error : err.message, 'SCRIPT_NOT_RUN');
      }
      throw err;
    }
  }

  /**
   * Wake-on-LAN (05 wire notes "4.6"): a device that is off cannot take a command, so an online device of the same
   * site relays the magic packet through its agent command channel (a `wake` command naming the MACs and the
   * broadcast address). 412 when there is no MAC or no relay.
   */
  private wake(ctx: RequestContext, device: DeviceRow) {
    const macs = macsOf(device);
    if (macs.length === 0) throw new DomainError('precondition_failed', 'No MAC address is known for this device', 'WAKE_NO_MAC');
    // The relay is one of the devices the caller may see: its site and device-group restrictions hold (01 §2.6).
    const relay =
      device.siteId === null
        ? undefined
        : this.devices
            .list(ctx, { siteId: device.siteId, status: ['online'], sort: 'lastSeen', sortDir: 'desc', limit: RELAY_CANDIDATES })
            .data.find((d) => d.id !== device.id && d.orgId === device.orgId);
    if (!relay) throw new DomainError('precondition_failed', 'No online device in the same site can relay the wake packet', 'WAKE_NO_RELAY');
    const { network, broadcast } = networkOf(device);
    const wakeAttemptId = randomUUID();
    const command = this.commands.create(ctx, relay.id, { type: 'wake', payload: { wakeAttemptId, targetDeviceId: device.id, macs, broadcast, network, port: 9 } });
    return { action: 'wake' as const, commandId: command.id, wakeAttemptId, relay: { deviceId: relay.id, hostname: relay.hostname }, network, broadcast, macs };
  }
}
