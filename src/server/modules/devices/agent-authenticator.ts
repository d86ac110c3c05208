import { AGENT_TOKEN_PATTERN } from '../../../contract/agents.js';
import type { Db } from '../../db/connection.js';
import { countWrites, type WatchedTable } from '../../db/write-counter.js';
import type { Caller } from '../../context.js';
import { unauthorized } from '../../errors.js';
import { ReadCache } from '../../lib/read-cache.js';
import { sha256Hex } from '../../security/crypto.js';
import { partnerStatusOfOrg } from '../tenancy/access.js';

/** What an agent's caller is made of: its device's identity and place. */
export interface AgentDevice {
  id: string;
  agentId: string;
  orgId: string;
  siteId: string | null;
  partnerId: string;
  hostname: string;
}

/** The context of an agent's own request: attribution as the agent, organization scope, no permissions. */
export function agentCaller(device: AgentDevice, partnerStatus: string | null): Caller {
  return {
    kind: 'agent',
    userId: null,
    email: null,
    name: device.hostname,
    scope: 'organization',
    partnerId: device.partnerId,
    orgId: device.orgId,
    orgAccess: null,
    orgIds: null,
    siteIds: device.siteId ? [device.siteId] : [],
    deviceGroupIds: null,
    roleId: null,
    permissions: [],
    mfa: false,
    sessionId: null,
    apiKeyId: null,
    agentId: device.agentId,
    deviceId: device.id,
    partnerStatus,
  };
}

/**
 * The writes that can change what an agent token authenticates as (db/write-counter.ts): the device's identity,
 * token, place, name and status, but not what every heartbeat writes (last seen, inventory, the same status
 * again); its organization's and partner's rows. Writes by another connection drop every kept token
 * (lib/read-cache.ts).
 */
const AGENT_WRITES: readonly WatchedTable[] = [
  { table: 'devices', columns: ['id', 'agent_id', 'agent_token_hash', 'org_id', 'site_id', 'partner_id', 'hostname', 'status'] },
  { table: 'organizations' },
  { table: 'partners' },
];

/** How many agents' tokens are kept by hash. */
const KEPT_AGENTS = 4096;

interface KnownAgent {
  decommissioned: boolean;
  caller: Caller;
}

/**
 * Authentication by agent bearer token (01 §5.13), the hot path of every agent request (heartbeats, command
 * polls): the device by the token's hash, kept with its caller while nothing it depends on is written. A
 * decommissioned device's token stops working at the next request. That the token is the agent's the path names
 * is checked by the guard, against the validated path parameter.
 */
export class AgentAuthenticator {
  private readonly byTokenHash;
  private readonly agentsByHash;

  constructor(private readonly db: Db) {
    this.byTokenHash = db.$client.prepare<[string], AgentDevice & { status: string }>(
      `SELECT id, agent_id AS agentId, org_id AS orgId, site_id AS siteId, partner_id AS partnerId, hostname, status
         FROM devices WHERE agent_token_hash = ?`,
    );
    this.agentsByHash = new ReadCache<KnownAgent>(db.$client, KEPT_AGENTS, Infinity, countWrites(db.$client, 'agent_auth', AGENT_WRITES));
  }

  authenticate(token: string): Caller {
    if (!AGENT_TOKEN_PATTERN.test(token)) throw unauthorized('Invalid agent token', 'INVALID_AGENT_TOKEN');
    const hash = sha256Hex(token);
    const known = this.agentsByHash.lookup(hash) ?? this.readAgent(hash);
    if (!known) throw unauthorized('Invalid agent token', 'INVALID_AGENT_TOKEN');
    if (known.decommissioned) throw unauthorized('Device has been decommissioned', 'DEVICE_DECOMMISSIONED');
    return known.caller;
  }

  /** The device with this token hash and its caller, kept for the next request (unknown hashes are not kept:
   * guessing cannot fill the cache). */
  private readAgent(hash: string): KnownAgent | undefined {
    const device = this.byTokenHash.get(hash);
    if (!device) return undefined;
    const caller = agentCaller(device, partnerStatusOfOrg(this.db, device.orgId));
    return this.agentsByHash.store(hash, { decommissioned: device.status === 'decommissioned', caller });
  }
}
