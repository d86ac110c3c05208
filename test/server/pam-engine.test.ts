import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pamRules, pamSignerGroups } from '../../src/server/db/schema/index.js';
import {
  firstMatchingRule,
  globMatches,
  inTimeWindow,
  localTime,
  ruleMatches,
  type EngineRequest,
  type EngineRule,
} from '../../src/server/modules/pam/engine.js';
import { AI, API, H1, H2, NO_RULE_CRITERIA, T1, T2, UAC, createRule, ingest, seedPamWorld, type PamWorld } from '../helpers/pam.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { eq } from 'drizzle-orm';

describe('04 PAM rule engine: glob and time window primitives', () => {
  it('04 PAM path globs match the whole string, * within a folder, ** across, \\ as /, case-insensitive, other characters literal', () => {
    const p = 'C:\\Program Files\\Vendor\\app.exe';
    expect(globMatches('C:/Program Files/Vendor/app.exe', p)).toBe(true);
    expect(globMatches('c:\\program files\\vendor\\APP.EXE', p)).toBe(true);
    expect(globMatches('C:/*/app.exe', p)).toBe(false);
    expect(globMatches('C:/**/app.exe', p)).toBe(true);
    expect(globMatches('C:/**', p)).toBe(true);
    expect(globMatches('*', p)).toBe(false);
    expect(globMatches('**', p)).toBe(true);
    expect(globMatches('**', '')).toBe(true);
    expect(globMatches('*', '')).toBe(true);
    expect(globMatches('', '')).toBe(true);
    expect(globMatches('', 'a')).toBe(false);
    expect(globMatches('a.c', 'abc')).toBe(false);
    expect(globMatches('a?c', 'abc')).toBe(false);
    expect(globMatches('a?c', 'a?c')).toBe(true);
    expect(globMatches('[ab]', 'a')).toBe(false);
    expect(globMatches('[ab]', '[AB]')).toBe(true);
    expect(globMatches('a/***/b', 'a/x/y/b')).toBe(true);
    expect(globMatches('a*b*c', 'axxbyyc')).toBe(true);
    expect(globMatches('a*b*c', 'axx/byyc')).toBe(false);
  });

  it('04 PAM globs cost at most pattern × subject: a pathological pattern answers at once', () => {
    const pattern = `${'**a'.repeat(300)}b`;
    const subject = 'a'.repeat(1024);
    const started = Date.now();
    expect(globMatches(pattern, subject)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('04 PAM time windows: local time of the zone, inclusive bounds, wrap past midnight with the start day', () => {
    expect(localTime(new Date('2024-06-05T12:00:00Z'), 'UTC')).toEqual({ weekday: 3, minute: 720 });
    expect(localTime(new Date('2024-06-04T23:30:00Z'), 'Asia/Tokyo')).toEqual({ weekday: 3, minute: 8 * 60 + 30 });
    expect(localTime(new Date('2024-06-05T00:00:00Z'), 'America/New_York')).toEqual({ weekday: 2, minute: 20 * 60 });
    const nine2five = { start: '09:00', end: '17:00' };
    expect(inTimeWindow(nine2five, new Date('2024-06-05T09:00:00Z'))).toBe(true);
    expect(inTimeWindow(nine2five, new Date('2024-06-05T17:00:59Z'))).toBe(true);
    expect(inTimeWindow(nine2five, new Date('2024-06-05T17:01:00Z'))).toBe(false);
    expect(inTimeWindow(nine2five, new Date('2024-06-05T08:59:59Z'))).toBe(false);
    const night = { start: '22:00', end: '06:00', days: [5] };
    expect(inTimeWindow(night, new Date('2024-06-07T22:00:00Z'))).toBe(true); // Friday 22:00
    expect(inTimeWindow(night, new Date('2024-06-08T06:00:00Z'))).toBe(true); // Saturday 06:00, Friday's window
    expect(inTimeWindow(night, new Date('2024-06-07T05:00:00Z'))).toBe(false); // Friday 05:00 is Thursday's window
    expect(inTimeWindow(night, new Date('2024-06-08T12:00:00Z'))).toBe(false);
    expect(inTimeWindow({ start: '10:00', end: '10:00' }, new Date('2024-06-05T10:00:30Z'))).toBe(true);
    expect(inTimeWindow({ start: '10:00', end: '10:00' }, new Date('2024-06-05T10:01:00Z'))).toBe(false);
  });
});

describe('04 PAM rule engine: the requests rules decide', () => {
  const rule = (criteria: Partial<EngineRule>): EngineRule => ({
    ...NO_RULE_CRITERIA,
    id: '00000000-0000-4000-8000-000000000001',
    name: 'by user',
    verdict: 'auto_approve',
    priority: 100,
    createdAt: '2024-01-01T00:00:00.000Z',
    siteId: null,
    enabled: true,
    ...criteria,
  });
  const request = (flowType: EngineRequest['flowType']): EngineRequest => ({
    flowType,
    subjectUsername: 'tech@a1.test',
    subjectGroups: ['Admins'],
    targetExecutablePath: null,
    targetExecutableHash: null,
    targetExecutableSigner: null,
    targetExecutableSignerThumbprint: null,
    parentImage: null,
    commandLine: null,
    toolName: null,
    riskTier: null,
    observedAt: new Date('2024-06-05T12:00:00Z'),
  });

  it("api-notes PAM: rules never decide a person's own request for administrator rights: no user or group rule applies to a tech_jit_admin request", () => {
    const groups = new Map();
    for (const criteria of [
      { matchUser: 'tech@a1.test' },
      { matchAdGroup: 'Admins' },
      { matchUser: 'x', matchNegate: ['user' as const] },
    ]) {
      const r = rule(criteria);
      expect(ruleMatches(r, request('uac_intercept'), groups)).toBe(true);
      expect(ruleMatches(r, request('ai_tool_action'), groups)).toBe(true);
      expect(ruleMatches(r, request('tech_jit_admin'), groups)).toBe(false);
      expect(firstMatchingRule([r], request('tech_jit_admin'), null, groups)).toBeNull();
    }
  });
});

type RuleSpec = Record<string, unknown> & {
  name: string;
  group?: { signers?: string[]; thumbprints?: string[] };
  site?: 'A1a' | 'A1b';
  createdAt?: string;
};
type DeviceKey = 'A1a' | 'A1b' | 'none';
interface Case {
  name: string;
  rules: RuleSpec[];
  request?: Record<string, unknown>;
  ai?: boolean;
  device?: DeviceKey;
  /** The rule that matched (its name), or null: no rule, the organization default. */
  expect: string | null;
}

const uac = (over: Record<string, unknown> = {}) => ({ ...UAC, ...over });
const ai = (over: Record<string, unknown> = {}) => ({ ...AI, ...over });
const without = (base: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(base).filter(([k]) => !keys.includes(k)));
const at = (iso: string) => uac({ observed_at: iso });
const R = (name: string, criteria: Record<string, unknown>): RuleSpec => ({ name, ...criteria });

const CASES: Case[] = [
  // path globs
  {
    name: 'glob: forward slashes match a backslash path',
    rules: [R('r', { matchPathGlob: 'C:/Program Files/Vendor/app.exe' })],
    expect: 'r',
  },
  {
    name: 'glob: backslashes and case are folded',
    rules: [R('r', { matchPathGlob: 'c:\\program files\\vendor\\APP.EXE' })],
    expect: 'r',
  },
  { name: 'glob: * inside one folder', rules: [R('r', { matchPathGlob: 'C:/Program Files/*/app.exe' })], expect: 'r' },
  { name: 'glob: * does not cross /', rules: [R('r', { matchPathGlob: 'C:/*/app.exe' })], expect: null },
  { name: 'glob: ** crosses /', rules: [R('r', { matchPathGlob: 'C:/**/app.exe' })], expect: 'r' },
  { name: 'glob: trailing ** matches the rest', rules: [R('r', { matchPathGlob: 'C:/**' })], expect: 'r' },
  {
    name: 'glob: *.exe in the folder',
    rules: [R('r', { matchPathGlob: 'C:/Program Files/Vendor/*.exe' })],
    expect: 'r',
  },
  {
    name: 'glob: *.msi does not match an .exe',
    rules: [R('r', { matchPathGlob: 'C:/Program Files/Vendor/*.msi' })],
    expect: null,
  },
  { name: 'glob: a leading * cannot reach into folders', rules: [R('r', { matchPathGlob: '*app.exe' })], expect: null },
  { name: 'glob: a leading ** can', rules: [R('r', { matchPathGlob: '**app.exe' })], expect: 'r' },
  {
    name: 'glob: the whole string must match (no prefix match)',
    rules: [R('r', { matchPathGlob: 'C:/Program Files/Vendor/app.ex' })],
    expect: null,
  },
  {
    name: 'glob: * may match nothing',
    rules: [R('r', { matchPathGlob: 'C:/Program Files/Vendor/app.exe*' })],
    expect: 'r',
  },
  { name: 'glob: ? is literal', rules: [R('r', { matchPathGlob: 'C:/Program Files/Vendor/a?p.exe' })], expect: null },
  {
    name: 'glob: a literal ? matches a ?',
    rules: [R('r', { matchPathGlob: 'C:/odd/a?p.exe' })],
    request: uac({ target_executable_path: 'C:\\odd\\a?p.exe' }),
    expect: 'r',
  },
  {
    name: 'glob: brackets are literal',
    rules: [R('r', { matchPathGlob: 'C:/Program Files/Vendor/[a]pp.exe' })],
    expect: null,
  },
  {
    name: 'glob: . is literal',
    rules: [R('r', { matchPathGlob: 'C:/Program Files/Vendor/app.exe' })],
    request: uac({ target_executable_path: 'C:\\Program Files\\Vendor\\appXexe' }),
    expect: null,
  },
  {
    name: 'glob: **/ needs its separator (literal semantics)',
    rules: [R('r', { matchPathGlob: 'C:/**/Vendor/**/app.exe' })],
    expect: null,
  },
  { name: 'parent image: **/explorer.exe', rules: [R('r', { matchParentImage: '**/explorer.exe' })], expect: 'r' },
  { name: 'parent image: C:/Windows/*.exe', rules: [R('r', { matchParentImage: 'C:/Windows/*.exe' })], expect: 'r' },
  { name: 'parent image: C:/*.exe does not cross /', rules: [R('r', { matchParentImage: 'C:/*.exe' })], expect: null },
  {
    name: 'parent image: missing in the request never matches',
    rules: [R('r', { matchParentImage: '**' })],
    request: without(UAC, 'parent_image'),
    expect: null,
  },
  // command line
  { name: 'command line: case-insensitive substring', rules: [R('r', { matchCommandLine: '--INSTALL' })], expect: 'r' },
  { name: 'command line: absent substring', rules: [R('r', { matchCommandLine: '--uninstall' })], expect: null },
  {
    name: 'command line: missing in the request never matches',
    rules: [R('r', { matchCommandLine: 'app' })],
    request: without(UAC, 'command_line'),
    expect: null,
  },
  // signer, hash, thumbprint, signer groups
  { name: 'signer: case-insensitive equality', rules: [R('r', { matchSigner: 'vendor inc' })], expect: 'r' },
  { name: 'signer: equality, not a substring', rules: [R('r', { matchSigner: 'Vendor' })], expect: null },
  {
    name: 'signer: missing in the request never matches',
    rules: [R('r', { matchSigner: 'Vendor Inc' })],
    request: without(UAC, 'target_executable_signer'),
    expect: null,
  },
  { name: 'hash: upper-case hex matches', rules: [R('r', { matchHash: H1.toUpperCase() })], expect: 'r' },
  { name: 'hash: another hash does not', rules: [R('r', { matchHash: H2 })], expect: null },
  {
    name: 'thumbprint with signer: both match',
    rules: [R('r', { matchSigner: 'Vendor Inc', matchSignerThumbprint: T1 })],
    expect: 'r',
  },
  {
    name: 'thumbprint with signer: wrong thumbprint',
    rules: [R('r', { matchSigner: 'Vendor Inc', matchSignerThumbprint: T2 })],
    expect: null,
  },
  {
    name: 'thumbprint alone, request without thumbprint',
    rules: [R('r', { matchSignerThumbprint: T1 })],
    request: without(UAC, 'target_executable_signer_thumbprint'),
    expect: null,
  },
  {
    name: 'signer group: signer listed (case-insensitive)',
    rules: [{ ...R('r', {}), group: { signers: ['VENDOR INC'] } }],
    expect: 'r',
  },
  { name: 'signer group: thumbprint listed', rules: [{ ...R('r', {}), group: { thumbprints: [T1] } }], expect: 'r' },
  {
    name: 'signer group: neither listed',
    rules: [{ ...R('r', {}), group: { signers: ['Other Corp'], thumbprints: [T2] } }],
    expect: null,
  },
  {
    name: 'signer group: request without signer or thumbprint',
    rules: [{ ...R('r', {}), group: { signers: ['Vendor Inc'] } }],
    request: without(UAC, 'target_executable_signer', 'target_executable_signer_thumbprint'),
    expect: null,
  },
  // negation
  {
    name: 'negated signer: another signer matches',
    rules: [R('r', { matchSigner: 'Other Corp', matchNegate: ['signer'] })],
    expect: 'r',
  },
  {
    name: 'negated signer: the same signer does not',
    rules: [R('r', { matchSigner: 'Vendor Inc', matchNegate: ['signer'] })],
    expect: null,
  },
  {
    name: 'negated signer: missing signer still never matches',
    rules: [R('r', { matchSigner: 'Other Corp', matchNegate: ['signer'] })],
    request: without(UAC, 'target_executable_signer'),
    expect: null,
  },
  {
    name: 'negated hash: another hash matches',
    rules: [R('r', { matchHash: H2, matchNegate: ['hash'] })],
    expect: 'r',
  },
  {
    name: 'negated hash: missing hash never matches',
    rules: [R('r', { matchHash: H2, matchNegate: ['hash'] })],
    request: without(UAC, 'target_executable_hash'),
    expect: null,
  },
  {
    name: 'negated path glob: outside C:/Windows matches',
    rules: [R('r', { matchPathGlob: 'C:/Windows/**', matchNegate: ['pathGlob'] })],
    expect: 'r',
  },
  {
    name: 'negated path glob: inside the glob does not',
    rules: [R('r', { matchPathGlob: 'C:/Program Files/**', matchNegate: ['pathGlob'] })],
    expect: null,
  },
  {
    name: 'negated command line: substring absent matches',
    rules: [R('r', { matchCommandLine: '--uninstall', matchNegate: ['commandLine'] })],
    expect: 'r',
  },
  {
    name: 'negated command line: missing command line never matches',
    rules: [R('r', { matchCommandLine: '--uninstall', matchNegate: ['commandLine'] })],
    request: without(UAC, 'command_line'),
    expect: null,
  },
  {
    name: 'negated user: another user matches',
    rules: [R('r', { matchUser: 'CORP\\bob', matchNegate: ['user'] })],
    expect: 'r',
  },
  {
    name: 'negated directory group: request without groups never matches',
    rules: [R('r', { matchAdGroup: 'Admins', matchNegate: ['adGroup'] })],
    request: without(UAC, 'subject_groups'),
    expect: null,
  },
  {
    name: 'negated signer group: signer not in the group matches',
    rules: [{ ...R('r', { matchNegate: ['signerGroup'] }), group: { signers: ['Other Corp'] } }],
    expect: 'r',
  },
  {
    name: 'negation inverts only its own criterion',
    rules: [R('r', { matchSigner: 'Other Corp', matchHash: H2, matchNegate: ['signer'] })],
    expect: null,
  },
  // user and directory group
  { name: 'user: case-insensitive equality', rules: [R('r', { matchUser: 'corp\\ALICE' })], expect: 'r' },
  { name: 'user: equality, not the bare name', rules: [R('r', { matchUser: 'alice' })], expect: null },
  {
    name: 'directory group: one of the groups (case-insensitive)',
    rules: [R('r', { matchAdGroup: 'helpdesk' })],
    expect: 'r',
  },
  { name: 'directory group: not a member', rules: [R('r', { matchAdGroup: 'Domain Admins' })], expect: null },
  {
    name: 'user-only rule also applies to an AI tool action',
    rules: [R('r', { matchUser: 'CORP\\alice' })],
    ai: true,
    expect: 'r',
  },
  // time windows
  {
    name: 'window 09:00-17:00 UTC at 12:00',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '17:00' } })],
    request: at('2024-06-05T12:00:00Z'),
    expect: 'r',
  },
  {
    name: 'window end is inclusive (17:00:59)',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '17:00' } })],
    request: at('2024-06-05T17:00:59Z'),
    expect: 'r',
  },
  {
    name: 'window: 17:01 is outside',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '17:00' } })],
    request: at('2024-06-05T17:01:00Z'),
    expect: null,
  },
  {
    name: 'window: 08:59 is outside',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '17:00' } })],
    request: at('2024-06-05T08:59:00Z'),
    expect: null,
  },
  {
    name: 'window in New York: 12:00Z is 08:00 EDT, outside',
    rules: [
      R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '17:00', timezone: 'America/New_York' } }),
    ],
    request: at('2024-06-05T12:00:00Z'),
    expect: null,
  },
  {
    name: 'window in New York: 13:00Z is 09:00 EDT, inside',
    rules: [
      R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '17:00', timezone: 'America/New_York' } }),
    ],
    request: at('2024-06-05T13:00:00Z'),
    expect: 'r',
  },
  {
    name: 'window in Tokyo: 01:00Z is 10:00 JST, inside',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '17:00', timezone: 'Asia/Tokyo' } })],
    request: at('2024-06-05T01:00:00Z'),
    expect: 'r',
  },
  {
    name: 'observed_at with an offset is the same instant',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '17:00' } })],
    request: at('2024-06-05T19:30:00+10:00'),
    expect: 'r',
  },
  {
    name: 'wrapped window 22:00-06:00 at 23:30',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '22:00', end: '06:00' } })],
    request: at('2024-06-05T23:30:00Z'),
    expect: 'r',
  },
  {
    name: 'wrapped window 22:00-06:00 at 03:00',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '22:00', end: '06:00' } })],
    request: at('2024-06-05T03:00:00Z'),
    expect: 'r',
  },
  {
    name: 'wrapped window 22:00-06:00 at noon',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '22:00', end: '06:00' } })],
    request: at('2024-06-05T12:00:00Z'),
    expect: null,
  },
  {
    name: 'weekdays Mon-Fri: Wednesday',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '00:00', end: '23:59', days: [1, 2, 3, 4, 5] } })],
    request: at('2024-06-05T12:00:00Z'),
    expect: 'r',
  },
  {
    name: 'weekdays Mon-Fri: Sunday',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '00:00', end: '23:59', days: [1, 2, 3, 4, 5] } })],
    request: at('2024-06-09T12:00:00Z'),
    expect: null,
  },
  {
    name: 'wrapped Friday night window covers Saturday 02:00',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '22:00', end: '06:00', days: [5] } })],
    request: at('2024-06-08T02:00:00Z'),
    expect: 'r',
  },
  {
    name: 'wrapped Friday night window: Friday 02:00 belongs to Thursday',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '22:00', end: '06:00', days: [5] } })],
    request: at('2024-06-07T02:00:00Z'),
    expect: null,
  },
  {
    name: 'wrapped Friday night window: Friday 23:00',
    rules: [R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '22:00', end: '06:00', days: [5] } })],
    request: at('2024-06-07T23:00:00Z'),
    expect: 'r',
  },
  {
    name: 'weekday of the zone: Tuesday UTC is Wednesday in Auckland',
    rules: [
      R('r', {
        matchUser: 'CORP\\alice',
        timeWindow: { start: '00:00', end: '23:59', days: [3], timezone: 'Pacific/Auckland' },
      }),
    ],
    request: at('2024-06-04T13:00:00Z'),
    expect: 'r',
  },
  {
    name: 'daylight saving: 07:30Z is 09:30 CEST after the change',
    rules: [
      R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '10:00', timezone: 'Europe/Berlin' } }),
    ],
    request: at('2024-03-31T07:30:00Z'),
    expect: 'r',
  },
  {
    name: 'daylight saving: 07:30Z is 08:30 CET the day before',
    rules: [
      R('r', { matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '10:00', timezone: 'Europe/Berlin' } }),
    ],
    request: at('2024-03-30T07:30:00Z'),
    expect: null,
  },
  {
    name: 'criteria match but the window does not',
    rules: [R('r', { matchPathGlob: '**', timeWindow: { start: '01:00', end: '02:00' } })],
    expect: null,
  },
  // order and first match
  {
    name: 'lower priority number runs first',
    rules: [R('p50', { matchPathGlob: '**', priority: 50 }), R('p10', { matchPathGlob: '**', priority: 10 })],
    expect: 'p10',
  },
  {
    name: 'same priority: the older rule wins',
    rules: [
      { ...R('newer', { matchPathGlob: '**' }), createdAt: '2024-02-01T00:00:00.000Z' },
      { ...R('older', { matchPathGlob: '**' }), createdAt: '2024-01-01T00:00:00.000Z' },
    ],
    expect: 'older',
  },
  {
    name: 'a disabled rule is skipped',
    rules: [
      R('off', { matchPathGlob: '**', priority: 1, enabled: false }),
      R('on', { matchPathGlob: '**', priority: 2 }),
    ],
    expect: 'on',
  },
  {
    name: 'first match wins over a later match',
    rules: [
      R('miss', { matchHash: H2, priority: 1 }),
      R('hit', { matchHash: H1, priority: 2 }),
      R('later', { matchPathGlob: '**', priority: 3 }),
    ],
    expect: 'hit',
  },
  {
    name: 'every criterion present must match',
    rules: [R('r', { matchHash: H1, matchSigner: 'Other Corp' })],
    expect: null,
  },
  // site scoping
  {
    name: "site rule applies on the site's device",
    rules: [{ ...R('site', { matchPathGlob: '**' }), site: 'A1a' }],
    device: 'A1a',
    expect: 'site',
  },
  {
    name: 'site rule does not apply on another site',
    rules: [{ ...R('site', { matchPathGlob: '**' }), site: 'A1b' }],
    device: 'A1a',
    expect: null,
  },
  {
    name: 'site rule does not apply on a device without a site',
    rules: [{ ...R('site', { matchPathGlob: '**' }), site: 'A1a' }],
    device: 'none',
    expect: null,
  },
  {
    name: 'organization-wide rule applies on a device without a site',
    rules: [R('org', { matchPathGlob: '**' })],
    device: 'none',
    expect: 'org',
  },
  {
    name: 'site and organization rules share one order',
    rules: [
      { ...R('site', { matchPathGlob: '**', priority: 100 }), site: 'A1a' },
      R('org', { matchPathGlob: '**', priority: 50 }),
    ],
    device: 'A1a',
    expect: 'org',
  },
  // tool-action rules and risk tiers
  {
    name: 'tool name and risk tier',
    rules: [R('r', { matchToolName: 'execute_command', matchRiskTier: 3 })],
    ai: true,
    expect: 'r',
  },
  {
    name: 'tool name with another risk tier',
    rules: [R('r', { matchToolName: 'execute_command', matchRiskTier: 3 })],
    request: ai({ risk_tier: 2 }),
    expect: null,
  },
  {
    name: 'tool name is case-insensitive',
    rules: [R('r', { matchToolName: 'EXECUTE_COMMAND' })],
    ai: true,
    expect: 'r',
  },
  { name: 'risk tier alone: any tool', rules: [R('r', { matchRiskTier: 3 })], ai: true, expect: 'r' },
  { name: 'a tool-action rule never matches a UAC prompt', rules: [R('r', { matchRiskTier: 3 })], expect: null },
  {
    name: 'an executable rule never matches an AI tool action',
    rules: [R('r', { matchPathGlob: '**' })],
    ai: true,
    expect: null,
  },
  {
    name: 'negated tool name',
    rules: [R('r', { matchToolName: 'disk_cleanup', matchNegate: ['toolName'] })],
    ai: true,
    expect: 'r',
  },
  {
    name: 'negated risk tier',
    rules: [R('r', { matchRiskTier: 2, matchNegate: ['riskTier'] })],
    ai: true,
    expect: 'r',
  },
  {
    name: 'unknown tool with any tier (fails open)',
    rules: [R('r', { matchToolName: 'my_custom_tool', matchRiskTier: 4 })],
    request: ai({ tool_name: 'my_custom_tool', risk_tier: 4 }),
    expect: 'r',
  },
  {
    name: 'tool rule does not match another tool',
    rules: [R('r', { matchToolName: 'disk_cleanup' })],
    ai: true,
    expect: null,
  },
];

describe('04 PAM rule engine through agent ingest (table of request/rule cases)', () => {
  let t: TestApp;
  let w: PamWorld;
  beforeAll(async () => {
    t = await createTestApp();
    w = await seedPamWorld(t);
  });
  afterAll(async () => t.close());

  it('has at least 60 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(60);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('04 PAM engine: %s', async (_name, c) => {
    t.db.delete(pamRules).run();
    t.db.delete(pamSignerGroups).run();
    const token = w.tokens.system;
    for (const spec of c.rules) {
      const { group, site, createdAt, ...rule } = spec;
      const body: Record<string, unknown> = { orgId: w.orgA1.id, verdict: 'require_approval', ...rule };
      if (group) {
        const res = await t.call('POST', `${API}/pam/signer-groups`, {
          token,
          body: { orgId: w.orgA1.id, name: `g-${spec.name}`, ...group },
        });
        expect(res.status, res.text).toBe(201);
        body.matchSignerGroupId = res.body.signerGroup.id;
      }
      if (site) body.siteId = site === 'A1a' ? w.siteA1a.id : w.siteA1b.id;
      const created = await createRule(t, token, body);
      if (createdAt) t.db.update(pamRules).set({ createdAt }).where(eq(pamRules.id, created.id)).run();
    }
    const device = c.device === 'none' ? w.devA1none : c.device === 'A1b' ? w.devA1b : w.devA1a;
    const res = await ingest(t, device, c.request ?? (c.ai ? AI : UAC));
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe('pending');
    const got = await t.call('GET', `${API}/pam/elevation-requests/${res.body.id}`, { token });
    expect(got.status).toBe(200);
    expect(got.body.request.pamRuleName).toBe(c.expect);
  });
});
