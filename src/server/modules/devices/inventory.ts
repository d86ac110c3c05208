import type { z } from 'zod';
import type { AgentInventorySchema } from '../../../contract/agents.js';
import type { devices } from '../../db/schema/index.js';

type Inventory = z.infer<typeof AgentInventorySchema> & { metrics?: Record<string, unknown> };
type Columns = Partial<typeof devices.$inferInsert>;
/** One installed program as a heartbeat reports it (handed to the software module's inventory). */
export type ReportedSoftware = NonNullable<Inventory['software']>[number];

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 255) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The primary interface: the first one reported with an IP address (else the first one). */
function primaryInterface(list: Record<string, unknown>[]): Record<string, unknown> | undefined {
  return list.find((i) => str(i.ipAddress) !== null) ?? list[0];
}

/**
 * The device columns an inventory report sets (issue 13): the reported blobs as sent plus the flattened
 * columns the filter compiler queries. A field the report omits is left out, so the stored value stays.
 */
export function inventoryColumns(inv: Partial<Inventory> & { hardwareInfo?: Record<string, unknown>; networkInfo?: Record<string, unknown>[] }): Columns {
  const out: Columns = {};
  if (inv.osVersion !== undefined) out.osVersion = inv.osVersion;
  if (inv.osBuild !== undefined) out.osBuild = inv.osBuild;
  if (inv.architecture !== undefined) out.architecture = inv.architecture;
  if (inv.uptimeSeconds !== undefined) out.uptimeSeconds = inv.uptimeSeconds;
  if (inv.isHeadless !== undefined) out.isHeadless = inv.isHeadless;
  if (inv.deviceRole !== undefined) out.deviceRole = inv.deviceRole;
  if (inv.watchdogStatus !== undefined) out.watchdogStatus = inv.watchdogStatus;
  if (inv.pendingPatchCount !== undefined) out.pendingPatchCount = inv.pendingPatchCount;
  if (inv.rebootRequired !== undefined) out.rebootRequired = inv.rebootRequired;
  if (inv.hardwareInfo !== undefined) {
    const h = inv.hardwareInfo;
    Object.assign(out, {
      hardwareInfo: h,
      hwManufacturer: str(h.manufacturer),
      hwModel: str(h.model),
      hwSerialNumber: str(h.serialNumber),
      hwCpuModel: str(h.cpuModel),
      hwGpuModel: str(h.gpuModel),
      hwCpuCores: num(h.cpuCores),
      hwRamTotalMb: num(h.ramTotalMb),
      hwDiskTotalGb: num(h.diskTotalGb),
    });
  }
  if (inv.networkInfo !== undefined) {
    const primary = primaryInterface(inv.networkInfo);
    const publicIp = inv.networkInfo.map((i) => str(i.publicIp)).find((ip) => ip !== null) ?? null;
    Object.assign(out, {
      networkInfo: inv.networkInfo,
      netIpAddress: str(primary?.ipAddress),
      netMacAddress: str(primary?.macAddress),
      netPublicIp: publicIp,
    });
  }
  if (inv.software !== undefined) {
    out.softwareNames = [...new Set(inv.software.map((s) => s.name.toLowerCase()))];
  }
  if (inv.metrics !== undefined) {
    Object.assign(out, {
      lastMetrics: inv.metrics,
      cpuPercent: num(inv.metrics.cpuPercent),
      ramPercent: num(inv.metrics.ramPercent),
      diskPercent: num(inv.metrics.diskPercent),
    });
  }
  return out;
}
