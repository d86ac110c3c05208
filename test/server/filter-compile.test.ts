import { randomUUID } from 'node:crypto';
import { asc } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alerts, deviceGroupMembers, deviceGroups, devices } from '../../src/server/db/schema/index.js';
import { compileFilter, FilterError, registerFilterFunctions } from '../../src/server/modules/filters/compile.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { seedWorld, type World } from '../helpers/seed.js';

const NOW = new Date('2026-11-25T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const H = 3_600_000;
const D = 24 * H;

type Cond = { field: string; operator: string; value?: unknown };
const c = (field: string, operator: string, value?: unknown): Cond => (value === undefined ? { field, operator } : { field, operator, value });
const all = (...conditions: unknown[]) => ({ operator: 'AND', conditions });
const any = (...conditions: unknown[]) => ({ operator: 'OR', conditions });

/** Device fixtures: each differs from the others in the fields the cases test. */
function fixtures(w: World) {
  const base = { partnerId: w.orgA1.partnerId, agentTokenHash: '', osVersion: '1', architecture: 'x64', agentVersion: '1.0.0' };
  return [
    {
      hostname: 'web-01', displayName: 'Web One', orgId: w.orgA1.id, siteId: w.siteA1a.id, osType: 'windows', status: 'online', deviceRole: 'server',
      lastSeenAt: ago(H), enrolledAt: '2026-01-10T08:00:00.000Z', tags: ['prod', 'web'], customFields: { owner: 'alice', rack: 'r1' },
      hwManufacturer: 'Dell', hwModel: 'R740', hwSerialNumber: 'SN-1', hwCpuModel: 'Xeon Gold', hwGpuModel: null, hwCpuCores: 8, hwRamTotalMb: 16384, hwDiskTotalGb: 256,
      netIpAddress: '10.0.0.1', netPublicIp: '203.0.113.1', netMacAddress: 'aa:aa:aa:aa:aa:01', cpuPercent: 10, ramPercent: 50, diskPercent: 95,
      softwareNames: ['backup agent', 'chrome'], isHeadless: true, uptimeSeconds: 1000, lastUser: 'CONTOSO\\bob', agentVersion: '2.1.0',
      osVersion: '10.0.20348', osBuild: '20348', architecture: 'x64', watchdogStatus: 'connected', pendingPatchCount: 2, rebootRequired: true, lastSeenIp: '198.51.100.1',
    },
    {
      hostname: 'web-02', displayName: null, orgId: w.orgA1.id, siteId: w.siteA1b.id, osType: 'linux', status: 'offline', deviceRole: 'server',
      lastSeenAt: ago(5 * D), enrolledAt: ago(366 * D), tags: ['prod'], customFields: { owner: 'bob', slots: 4 },
      hwManufacturer: 'HP', hwModel: 'DL380', hwCpuModel: 'EPYC', hwCpuCores: 4, hwRamTotalMb: 8192, hwDiskTotalGb: 100,
      netIpAddress: '10.0.0.2', netMacAddress: 'aa:aa:aa:aa:aa:02', cpuPercent: 90, ramPercent: 80, diskPercent: 20,
      softwareNames: ['chrome'], isHeadless: true, uptimeSeconds: 50, lastUser: null, agentVersion: '2.0.0',
      osVersion: 'Ubuntu 22.04', architecture: 'arm64', watchdogStatus: 'offline', pendingPatchCount: 0, rebootRequired: false,
    },
    {
      hostname: 'desk_01', displayName: '100% desk', orgId: w.orgA1.id, siteId: w.siteA1a.id, osType: 'windows', status: 'online', deviceRole: 'workstation',
      lastSeenAt: ago(10 * 60_000), enrolledAt: ago(5 * D), tags: [], customFields: {},
      hwManufacturer: 'Lenovo', hwCpuCores: 16, cpuPercent: 50, softwareNames: ['backup agent'], isHeadless: false, lastUser: 'alice', architecture: 'x86',
      watchdogStatus: 'failover', quarantinedAt: ago(2 * D),
    },
    {
      hostname: 'mac-01', displayName: 'Design Mac', orgId: w.orgA1.id, siteId: null, osType: 'macos', status: 'maintenance', deviceRole: 'unknown',
      lastSeenAt: null, enrolledAt: ago(40 * D), tags: ['Design', 'prod'], customFields: { owner: 'Alice' }, softwareNames: [], isHeadless: null, lastUser: 'carol',
    },
    {
      hostname: 'deskX01', displayName: 'b-org desk', orgId: w.orgB1.id, siteId: w.siteB1a.id, osType: 'linux', status: 'decommissioned', deviceRole: 'workstation',
      lastSeenAt: ago(100 * D), enrolledAt: ago(400 * D), tags: ['web'], customFields: { owner: '50%' }, softwareNames: ['backup agent 2'],
    },
  ].map((d: any) => ({ ...base, ...d, partnerId: d.orgId === w.orgB1.id ? w.orgB1.partnerId : base.partnerId, id: randomUUID(), agentId: randomUUID(), agentTokenHash: randomUUID() })) as (typeof devices.$inferInsert)[];
}

describe('02§4.5 filter compiler (05 wire notes "4.5": field list, operators, validation)', () => {
  let t: TestApp;
  let w: World;
  let groupId: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp();
    w = await seedWorld(t, { mfa: true });
    registerFilterFunctions(t.db.$client);
    const rows = fixtures(w);
    t.db.insert(devices).values(rows).run();
    ids = Object.fromEntries(rows.map((r) => [r.hostname, r.id as string]));
    groupId = t.db.insert(deviceGroups).values({ orgId: w.orgA1.id, name: 'g', type: 'static' }).returning().get().id;
    t.db.insert(deviceGroupMembers).values([{ groupId, deviceId: ids['web-02'] as string, addedAt: NOW.toISOString() }]).run();
    t.db
      .insert(alerts)
      .values([
        { orgId: w.orgA1.id, deviceId: ids['desk_01'], severity: 'critical', status: 'active', title: 'x', message: 'x', triggeredAt: ago(H) },
        { orgId: w.orgA1.id, deviceId: ids['web-01'], severity: 'critical', status: 'resolved', title: 'x', message: 'x', triggeredAt: ago(H) },
        { orgId: w.orgA1.id, deviceId: ids['web-02'], severity: 'high', status: 'active', title: 'x', message: 'x', triggeredAt: ago(H) },
      ])
      .run();
  });
  afterAll(async () => t.close());

  const run = (tree: unknown) => {
    const { where } = compileFilter(tree, { now: NOW });
    return t.db.select({ h: devices.hostname }).from(devices).where(where).orderBy(asc(devices.hostname)).all().map((r) => r.h);
  };

  const cases: [string, unknown, string[]][] = [
    // string operators (case-insensitive), LIKE wildcards literal
    ['hostname equals (case-insensitive)', c('hostname', 'equals', 'WEB-01'), ['web-01']],
    ['hostname notEquals', c('hostname', 'notEquals', 'web-01'), ['deskX01', 'desk_01', 'mac-01', 'web-02']],
    ['hostname contains', c('hostname', 'contains', 'EB'), ['web-01', 'web-02']],
    ['hostname notContains', c('hostname', 'notContains', 'web'), ['deskX01', 'desk_01', 'mac-01']],
    ['hostname startsWith', c('hostname', 'startsWith', 'Web-'), ['web-01', 'web-02']],
    ['hostname endsWith', c('hostname', 'endsWith', '01'), ['deskX01', 'desk_01', 'mac-01', 'web-01']],
    ['_ in contains is literal', c('hostname', 'contains', 'desk_'), ['desk_01']],
    ['_ in startsWith is literal', c('hostname', 'startsWith', 'desk_0'), ['desk_01']],
    ['% in contains is literal', c('displayName', 'contains', '100%'), ['desk_01']],
    ['% alone matches only a literal %', c('displayName', 'contains', '%'), ['desk_01']],
    ['backslash is literal', c('lastUser', 'contains', 'contoso\\'), ['web-01']],
    ['hostname matches', c('hostname', 'matches', '^web-0[12]$'), ['web-01', 'web-02']],
    ['matches is case-insensitive', c('hostname', 'matches', '^MAC'), ['mac-01']],
    ['hostname in', c('hostname', 'in', ['WEB-01', 'mac-01', 'nope']), ['mac-01', 'web-01']],
    ['hostname notIn', c('hostname', 'notIn', ['web-01', 'web-02']), ['deskX01', 'desk_01', 'mac-01']],
    ['displayName isNull', c('displayName', 'isNull'), ['web-02']],
    ['displayName isNotNull', c('displayName', 'isNotNull'), ['deskX01', 'desk_01', 'mac-01', 'web-01']],
    ['displayName notEquals includes null', c('displayName', 'notEquals', 'Web One'), ['deskX01', 'desk_01', 'mac-01', 'web-02']],
    ['agentVersion startsWith', c('agentVersion', 'startsWith', '2.'), ['web-01', 'web-02']],
    ['lastUser equals', c('lastUser', 'equals', 'ALICE'), ['desk_01']],
    ['lastUser isNull', c('lastUser', 'isNull'), ['deskX01', 'web-02']],
    ['lastUser notContains includes null', c('lastUser', 'notContains', 'o'), ['deskX01', 'desk_01', 'web-02']],
    ['lastSeenIp equals', c('lastSeenIp', 'equals', '198.51.100.1'), ['web-01']],
    ['osVersion contains', c('osVersion', 'contains', 'ubuntu'), ['web-02']],
    ['osBuild equals', c('osBuild', 'equals', '20348'), ['web-01']],
    ['hardware.manufacturer in', c('hardware.manufacturer', 'in', ['dell', 'hp']), ['web-01', 'web-02']],
    ['hardware.model startsWith', c('hardware.model', 'startsWith', 'DL'), ['web-02']],
    ['hardware.serialNumber equals', c('hardware.serialNumber', 'equals', 'sn-1'), ['web-01']],
    ['hardware.cpuModel contains', c('hardware.cpuModel', 'contains', 'gold'), ['web-01']],
    ['hardware.gpuModel isNull', c('hardware.gpuModel', 'isNull'), ['deskX01', 'desk_01', 'mac-01', 'web-01', 'web-02']],
    ['network.ipAddress startsWith', c('network.ipAddress', 'startsWith', '10.0.0.'), ['web-01', 'web-02']],
    ['network.publicIp isNotNull', c('network.publicIp', 'isNotNull'), ['web-01']],
    ['network.macAddress endsWith', c('network.macAddress', 'endsWith', ':02'), ['web-02']],
    ['network.ipAddress matches', c('network.ipAddress', 'matches', '^10\\.0\\.0\\.[0-9]$'), ['web-01', 'web-02']],
    // enums
    ['status equals', c('status', 'equals', 'online'), ['desk_01', 'web-01']],
    ['status notEquals', c('status', 'notEquals', 'online'), ['deskX01', 'mac-01', 'web-02']],
    ['status in', c('status', 'in', ['offline', 'maintenance']), ['mac-01', 'web-02']],
    ['status notIn', c('status', 'notIn', ['online', 'decommissioned']), ['mac-01', 'web-02']],
    ['deviceRole equals', c('deviceRole', 'equals', 'server'), ['web-01', 'web-02']],
    ['deviceRole in', c('deviceRole', 'in', ['workstation', 'unknown']), ['deskX01', 'desk_01', 'mac-01']],
    ['watchdogStatus equals', c('watchdogStatus', 'equals', 'failover'), ['desk_01']],
    ['watchdogStatus notEquals includes unknown', c('watchdogStatus', 'notEquals', 'connected'), ['deskX01', 'desk_01', 'mac-01', 'web-02']],
    ['osType equals', c('osType', 'equals', 'linux'), ['deskX01', 'web-02']],
    ['osType notIn', c('osType', 'notIn', ['linux', 'windows']), ['mac-01']],
    ['architecture equals', c('architecture', 'equals', 'arm64'), ['web-02']],
    ['architecture in', c('architecture', 'in', ['x86', 'arm64']), ['desk_01', 'web-02']],
    // datetimes
    ['lastSeenAt withinLast minutes', c('lastSeenAt', 'withinLast', { amount: 30, unit: 'minutes' }), ['desk_01']],
    ['lastSeenAt withinLast hours', c('lastSeenAt', 'withinLast', { amount: 2, unit: 'hours' }), ['desk_01', 'web-01']],
    ['lastSeenAt withinLast days', c('lastSeenAt', 'withinLast', { amount: 6, unit: 'days' }), ['desk_01', 'web-01', 'web-02']],
    ['lastSeenAt withinLast weeks', c('lastSeenAt', 'withinLast', { amount: 1, unit: 'weeks' }), ['desk_01', 'web-01', 'web-02']],
    ['lastSeenAt withinLast months', c('lastSeenAt', 'withinLast', { amount: 4, unit: 'months' }), ['deskX01', 'desk_01', 'web-01', 'web-02']],
    ['lastSeenAt notWithinLast (never seen counts)', c('lastSeenAt', 'notWithinLast', { amount: 3, unit: 'days' }), ['deskX01', 'mac-01', 'web-02']],
    ['enrolledAt notWithinLast months', c('enrolledAt', 'notWithinLast', { amount: 12, unit: 'months' }), ['deskX01', 'web-02']],
    ['enrolledAt before (date)', c('enrolledAt', 'before', '2026-01-10'), ['deskX01', 'web-02']],
    ['enrolledAt after (date = end of day)', c('enrolledAt', 'after', '2026-01-10'), ['desk_01', 'mac-01']],
    ['enrolledAt equals a day', c('enrolledAt', 'equals', '2026-01-10'), ['web-01']],
    ['enrolledAt equals an instant', c('enrolledAt', 'equals', '2026-01-10T08:00:00Z'), ['web-01']],
    ['enrolledAt notEquals a day', c('enrolledAt', 'notEquals', '2026-01-10'), ['deskX01', 'desk_01', 'mac-01', 'web-02']],
    ['enrolledAt between inclusive', c('enrolledAt', 'between', { from: '2026-01-10T08:00:00Z', to: ago(5 * D) }), ['desk_01', 'mac-01', 'web-01']],
    ['lastSeenAt isNull', c('lastSeenAt', 'isNull'), ['mac-01']],
    ['quarantinedAt isNotNull', c('quarantinedAt', 'isNotNull'), ['desk_01']],
    // numbers
    ['metrics.cpuPercent greaterThan', c('metrics.cpuPercent', 'greaterThan', 50), ['web-02']],
    ['metrics.cpuPercent greaterThanOrEquals', c('metrics.cpuPercent', 'greaterThanOrEquals', 50), ['desk_01', 'web-02']],
    ['metrics.cpuPercent lessThan', c('metrics.cpuPercent', 'lessThan', 50), ['web-01']],
    ['metrics.cpuPercent lessThanOrEquals', c('metrics.cpuPercent', 'lessThanOrEquals', 50), ['desk_01', 'web-01']],
    ['metrics.cpuPercent between inclusive', c('metrics.cpuPercent', 'between', { from: 10, to: 50 }), ['desk_01', 'web-01']],
    ['metrics.ramPercent equals', c('metrics.ramPercent', 'equals', 80), ['web-02']],
    ['metrics.diskPercent notEquals includes null', c('metrics.diskPercent', 'notEquals', 95), ['deskX01', 'desk_01', 'mac-01', 'web-02']],
    ['metrics.diskPercent isNull', c('metrics.diskPercent', 'isNull'), ['deskX01', 'desk_01', 'mac-01']],
    ['hardware.cpuCores greaterThanOrEquals', c('hardware.cpuCores', 'greaterThanOrEquals', 8), ['desk_01', 'web-01']],
    ['hardware.ramTotalMb between', c('hardware.ramTotalMb', 'between', { from: 8192, to: 8192 }), ['web-02']],
    ['hardware.diskTotalGb isNotNull', c('hardware.diskTotalGb', 'isNotNull'), ['web-01', 'web-02']],
    ['uptimeSeconds lessThan', c('uptimeSeconds', 'lessThan', 100), ['web-02']],
    ['daysSinceLastSeen greaterThan', c('daysSinceLastSeen', 'greaterThan', 3), ['deskX01', 'web-02']],
    ['daysSinceLastSeen equals (whole days)', c('daysSinceLastSeen', 'equals', 5), ['web-02']],
    ['daysSinceLastSeen isNull', c('daysSinceLastSeen', 'isNull'), ['mac-01']],
    ['daysSinceEnrolled lessThanOrEquals', c('daysSinceEnrolled', 'lessThanOrEquals', 40), ['desk_01', 'mac-01']],
    // booleans and flags
    ['isHeadless equals true', c('isHeadless', 'equals', true), ['web-01', 'web-02']],
    ['isHeadless equals false (unknown counts false)', c('isHeadless', 'equals', false), ['deskX01', 'desk_01', 'mac-01']],
    ['isHeadless notEquals true', c('isHeadless', 'notEquals', true), ['deskX01', 'desk_01', 'mac-01']],
    ['patches.pending equals true', c('patches.pending', 'equals', true), ['web-01']],
    ['patches.pending notEquals true', c('patches.pending', 'notEquals', true), ['deskX01', 'desk_01', 'mac-01', 'web-02']],
    ['system.rebootRequired equals true', c('system.rebootRequired', 'equals', true), ['web-01']],
    ['alerts.critical equals true (open critical only)', c('alerts.critical', 'equals', true), ['desk_01']],
    ['alerts.critical equals false', c('alerts.critical', 'equals', false), ['deskX01', 'mac-01', 'web-01', 'web-02']],
    // tags
    ['tags hasAny', c('tags', 'hasAny', ['web', 'design']), ['deskX01', 'mac-01', 'web-01']],
    ['tags hasAll', c('tags', 'hasAll', ['prod', 'web']), ['web-01']],
    ['tags hasAll with duplicates', c('tags', 'hasAll', ['prod', 'PROD']), ['mac-01', 'web-01', 'web-02']],
    ['tags contains (an element, case-insensitive)', c('tags', 'contains', 'DESIGN'), ['mac-01']],
    ['tags isEmpty', c('tags', 'isEmpty'), ['desk_01']],
    ['tags isNotEmpty', c('tags', 'isNotEmpty'), ['deskX01', 'mac-01', 'web-01', 'web-02']],
    // software
    ['software.installed contains', c('software.installed', 'contains', 'Backup'), ['deskX01', 'desk_01', 'web-01']],
    ['software.installed equals', c('software.installed', 'equals', 'Backup Agent'), ['desk_01', 'web-01']],
    ['software.installed notContains', c('software.installed', 'notContains', 'chrome'), ['deskX01', 'desk_01', 'mac-01']],
    ['software.installed in', c('software.installed', 'in', ['chrome', 'none']), ['web-01', 'web-02']],
    ['software.installed hasAll', c('software.installed', 'hasAll', ['chrome', 'backup agent']), ['web-01']],
    ['software.notInstalled equals', c('software.notInstalled', 'equals', 'backup agent'), ['deskX01', 'mac-01', 'web-02']],
    ['software.notInstalled hasAny', c('software.notInstalled', 'hasAny', ['chrome']), ['deskX01', 'desk_01', 'mac-01']],
    // custom fields
    ['custom field equals (case-insensitive)', c('custom.owner', 'equals', 'alice'), ['mac-01', 'web-01']],
    ['custom field isNull', c('custom.owner', 'isNull'), ['desk_01']],
    ['custom field % literal', c('custom.owner', 'endsWith', '0%'), ['deskX01']],
    ['custom number as string', c('custom.slots', 'equals', '4'), ['web-02']],
    ['custom field in', c('custom.rack', 'in', ['R1']), ['web-01']],
    // hierarchy
    ['orgId equals', (w_: World) => c('orgId', 'equals', w_.orgB1.id), ['deskX01']],
    ['siteId in', (w_: World) => c('siteId', 'in', [w_.siteA1a.id, w_.siteA1b.id]), ['desk_01', 'web-01', 'web-02']],
    ['groupId equals', () => c('groupId', 'equals', groupId), ['web-02']],
    // nesting
    ['AND of two', all(c('osType', 'equals', 'windows'), c('status', 'equals', 'online')), ['desk_01', 'web-01']],
    ['OR of two', any(c('osType', 'equals', 'macos'), c('hostname', 'equals', 'web-02')), ['mac-01', 'web-02']],
    [
      'nested: windows servers not seen in 3 days, or lacking the backup agent',
      all(c('status', 'notEquals', 'decommissioned'), any(all(c('osType', 'equals', 'windows'), c('lastSeenAt', 'notWithinLast', { amount: 3, unit: 'days' })), c('software.notInstalled', 'equals', 'backup agent'))),
      ['mac-01', 'web-02'],
    ],
    ['three levels deep', any(all(any(c('hostname', 'equals', 'mac-01')))), ['mac-01']],
    ['an injection attempt is just a value', c('hostname', 'equals', "x' OR 1=1 --"), []],
  ];

  for (const [name, tree, expected] of cases) {
    it(`02§4.5 ${name}`, () => {
      const built = typeof tree === 'function' ? (tree as (w: World) => unknown)(w) : tree;
      const root = built && typeof built === 'object' && 'conditions' in built ? built : all(built);
      expect(run(root)).toEqual(expected);
    });
  }

  const invalid: [string, unknown, string][] = [
    ['unknown field', c('nope', 'equals', 'x'), 'Unknown field: nope'],
    ['field keys are case-sensitive', c('Hostname', 'equals', 'x'), 'Unknown field: Hostname'],
    ['unknown prefix family member', c('hardware.flux', 'equals', 'x'), 'Unknown field: hardware.flux'],
    ['invalid custom key', c('custom.Bad-Key', 'equals', 'x'), 'Invalid custom field key: custom.Bad-Key'],
    ['operator not valid for field', c('status', 'contains', 'on'), 'Operator contains not valid for field status'],
    ['number operator on string', c('hostname', 'greaterThan', 3), 'Operator greaterThan not valid for field hostname'],
    ['regex too long', c('hostname', 'matches', 'a'.repeat(251)), 'Regex pattern too long for field hostname (max 250 characters)'],
    ['invalid regex', c('hostname', 'matches', '(unclosed'), 'Invalid regex pattern for field hostname'],
    ['backreference refused (not linear)', c('hostname', 'matches', '(a)\\1'), 'Invalid regex pattern for field hostname'],
    ['in needs an array', c('hostname', 'in', 'web-01'), 'Invalid value for field hostname: expected a non-empty array of strings (at most 1000)'],
    ['between needs from and to', c('metrics.cpuPercent', 'between', { from: 1 }), 'Invalid value for field metrics.cpuPercent: between needs {from, to} numbers'],
    ['number needs a number', c('metrics.cpuPercent', 'greaterThan', '5'), 'Invalid value for field metrics.cpuPercent: expected a number'],
    ['enum value out of range', c('status', 'equals', 'asleep'), 'Invalid value for field status'],
    ['withinLast bad unit', c('lastSeenAt', 'withinLast', { amount: 3, unit: 'years' }), 'Invalid value for field lastSeenAt: expected {amount'],
    ['date not a date', c('enrolledAt', 'before', 'yesterday'), 'Invalid value for field enrolledAt: expected an ISO 8601 date'],
    ['boolean needs a boolean', c('isHeadless', 'equals', 'yes'), 'Invalid value for field isHeadless: expected true or false'],
    ['empty group', { operator: 'AND', conditions: [] }, 'A group needs operator AND or OR'],
    ['bad group operator', { operator: 'XOR', conditions: [c('hostname', 'equals', 'x')] }, 'A group needs operator AND or OR'],
  ];
  for (const [name, tree, message] of invalid) {
    it(`02§4.5 400 Invalid filter: ${name}`, () => {
      const root = tree && typeof tree === 'object' && 'conditions' in tree ? tree : all(tree);
      let caught: unknown;
      try {
        compileFilter(root, { now: NOW });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(FilterError);
      expect((caught as FilterError).message).toBe('Invalid filter');
      expect((caught as FilterError).problems.some((p) => p.startsWith(message))).toBe(true);
    });
  }

  it('02§4.5 a catastrophic pattern runs in linear time (RE2), not exponential backtracking', () => {
    t.db.insert(devices).values({ ...(fixtures(w)[0] as typeof devices.$inferInsert), id: randomUUID(), agentId: randomUUID(), agentTokenHash: randomUUID(), hostname: `${'a'.repeat(200)}!` }).run();
    const started = Date.now();
    expect(run(all(c('hostname', 'matches', '^(a+)+$')))).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('02§4.5 values are bound parameters, never part of the SQL text', () => {
    const { where } = compileFilter(all(c('hostname', 'contains', 'SECRET-VALUE'), c('custom.owner', 'equals', 'x')), { now: NOW });
    const query = t.db.select().from(devices).where(where).toSQL();
    expect(query.sql).not.toContain('SECRET-VALUE');
    expect(query.params).toContain('%SECRET-VALUE%');
  });

  it('02§4.5 every problem of a tree is reported at once, and trees are bounded', () => {
    try {
      compileFilter(all(c('nope', 'equals', 1), c('status', 'contains', 'x')), { now: NOW });
    } catch (err) {
      expect((err as FilterError).problems).toEqual(['Unknown field: nope', 'Operator contains not valid for field status']);
    }
    const deep = [...Array(10).keys()].reduce<unknown>((acc) => all(acc), c('hostname', 'equals', 'x'));
    expect(() => compileFilter(deep)).toThrow(FilterError);
    expect(() => compileFilter(all(...Array.from({ length: 201 }, () => c('hostname', 'equals', 'x'))))).toThrow(FilterError);
  });
});
