import type Database from 'better-sqlite3';
import { and, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { RE2JS } from 're2js';
import { deviceGroupMembers, devices } from '../../db/schema/index.js';
import { DomainError } from '../../errors.js';
import { devicesWithOpenCriticalAlert } from '../alerts/queries.js';
import { containsPattern, likeEscape } from '../../lib/like.js';

/**
 * The device filter compiler (02 §2.9, §4.5; 05 wire notes "4.5"): a condition tree of nested AND/OR groups
 * becomes ONE parameterised drizzle `SQL` over the `devices` table. Pure: no HTTP, no reads; every value is a
 * bound parameter, every identifier comes from the field table below. Filters, dynamic groups and device lists
 * all compile through here, so one saved filter means the same device set everywhere.
 */

export type FilterValue = unknown;
export interface FilterCondition {
  field: string;
  operator: string;
  value?: FilterValue;
}
export interface FilterGroup {
  operator: 'AND' | 'OR';
  conditions: (FilterCondition | FilterGroup)[];
}

type FieldType =
  | 'string'
  | 'enum'
  | 'datetime'
  | 'number'
  | 'boolean'
  | 'array'
  | 'softwareInstalled'
  | 'softwareNotInstalled'
  | 'flag'
  | 'hierarchy';

const STRING_OPS = ['equals', 'notEquals', 'contains', 'notContains', 'startsWith', 'endsWith', 'matches', 'in', 'notIn', 'isNull', 'isNotNull'];
const OPERATORS: Record<FieldType, readonly string[]> = {
  string: STRING_OPS,
  enum: ['equals', 'notEquals', 'in', 'notIn'],
  datetime: ['equals', 'notEquals', 'before', 'after', 'between', 'withinLast', 'notWithinLast', 'isNull', 'isNotNull'],
  number: ['equals', 'notEquals', 'greaterThan', 'greaterThanOrEquals', 'lessThan', 'lessThanOrEquals', 'between', 'isNull', 'isNotNull'],
  boolean: ['equals', 'notEquals'],
  array: ['hasAny', 'hasAll', 'isEmpty', 'isNotEmpty', 'contains'],
  softwareInstalled: ['contains', 'notContains', 'equals', 'in', 'hasAny', 'hasAll'],
  softwareNotInstalled: ['contains', 'equals', 'in', 'hasAny'],
  flag: ['equals', 'notEquals'],
  hierarchy: ['equals', 'in'],
};

const ENUMS: Record<string, readonly string[]> = {
  status: ['online', 'offline', 'maintenance', 'decommissioned', 'quarantined', 'updating', 'pending'],
  deviceRole: ['workstation', 'server', 'printer', 'router', 'switch', 'firewall', 'access_point', 'phone', 'iot', 'camera', 'nas', 'unknown'],
  watchdogStatus: ['connected', 'failover', 'offline'],
  osType: ['windows', 'macos', 'linux'],
  architecture: ['x64', 'x86', 'arm64'],
};

/** Whole days since a timestamp column, at the compile's `now` (null when the column is null). */
const daysSince = (column: SQLWrapper, now: string) => sql`CAST(julianday(${now}) - julianday(${column}) AS INTEGER)`;

interface FieldDef {
  type: FieldType;
  /** The column expression; `now` is the evaluation instant (ISO). */
  expr: (now: string) => SQL | SQLWrapper;
}

const col =
  (c: SQLWrapper): FieldDef['expr'] =>
  () =>
    c;
const f = (type: FieldType, expr: FieldDef['expr']): FieldDef => ({ type, expr });

/** The complete field list of 05 wire notes "4.5" (keys are case-sensitive). */
export const FIELDS: Record<string, FieldDef> = {
  hostname: f('string', col(devices.hostname)),
  displayName: f('string', col(devices.displayName)),
  agentVersion: f('string', col(devices.agentVersion)),
  lastUser: f('string', col(devices.lastUser)),
  lastSeenIp: f('string', col(devices.lastSeenIp)),
  osVersion: f('string', col(devices.osVersion)),
  osBuild: f('string', col(devices.osBuild)),
  'hardware.manufacturer': f('string', col(devices.hwManufacturer)),
  'hardware.model': f('string', col(devices.hwModel)),
  'hardware.serialNumber': f('string', col(devices.hwSerialNumber)),
  'hardware.cpuModel': f('string', col(devices.hwCpuModel)),
  'hardware.gpuModel': f('string', col(devices.hwGpuModel)),
  'network.ipAddress': f('string', col(devices.netIpAddress)),
  'network.publicIp': f('string', col(devices.netPublicIp)),
  'network.macAddress': f('string', col(devices.netMacAddress)),
  status: f('enum', col(devices.status)),
  deviceRole: f('enum', col(devices.deviceRole)),
  watchdogStatus: f('enum', col(devices.watchdogStatus)),
  osType: f('enum', col(devices.osType)),
  architecture: f('enum', col(devices.architecture)),
  enrolledAt: f('datetime', col(devices.enrolledAt)),
  lastSeenAt: f('datetime', col(devices.lastSeenAt)),
  quarantinedAt: f('datetime', col(devices.quarantinedAt)),
  uptimeSeconds: f('number', col(devices.uptimeSeconds)),
  'hardware.cpuCores': f('number', col(devices.hwCpuCores)),
  'hardware.ramTotalMb': f('number', col(devices.hwRamTotalMb)),
  'hardware.diskTotalGb': f('number', col(devices.hwDiskTotalGb)),
  'metrics.cpuPercent': f('number', col(devices.cpuPercent)),
  'metrics.ramPercent': f('number', col(devices.ramPercent)),
  'metrics.diskPercent': f('number', col(devices.diskPercent)),
  daysSinceLastSeen: f('number', (now) => daysSince(devices.lastSeenAt, now)),
  daysSinceEnrolled: f('number', (now) => daysSince(devices.enrolledAt, now)),
  isHeadless: f('boolean', col(devices.isHeadless)),
  tags: f('array', col(devices.tags)),
  'software.installed': f('softwareInstalled', col(devices.softwareNames)),
  'software.notInstalled': f('softwareNotInstalled', col(devices.softwareNames)),
  'patches.pending': f('flag', () => sql`(coalesce(${devices.pendingPatchCount}, 0) > 0)`),
  'alerts.critical': f('flag', () => sql`(${devices.id} IN (${devicesWithOpenCriticalAlert()}))`),
  'system.rebootRequired': f('flag', () => sql`(coalesce(${devices.rebootRequired}, 0) = 1)`),
  orgId: f('hierarchy', col(devices.orgId)),
  siteId: f('hierarchy', col(devices.siteId)),
  groupId: f('hierarchy', col(devices.id)),
};

export const FIELD_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$/;
const CUSTOM_KEY = /^[a-z][a-z0-9_]*$/;
export const MAX_REGEX_LENGTH = 250;
/** Bounds on a tree, so no request builds an unbounded query. */
export const MAX_DEPTH = 8;
export const MAX_CONDITIONS = 200;
const MAX_LIST = 1000;
const MAX_TEXT = 1000;

const UNIT_MS = { minutes: 60_000, hours: 3_600_000, days: 86_400_000, weeks: 604_800_000 } as const;
const UNITS = ['minutes', 'hours', 'days', 'weeks', 'months'] as const;

/** The error of an invalid tree: 400 with the wire messages in `details` (05 wire notes "4.5"). */
export class FilterError extends DomainError {
  constructor(
    message: string,
    readonly problems: string[],
  ) {
    super('invalid', message, 'INVALID_FILTER', { details: problems });
  }
}

/** A table entry by a key from the request: own entries only, so `constructor` or `toString` is no entry. */
function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isGroup = (v: Record<string, unknown>): boolean => 'conditions' in v;

// ---- the regular expression function ----

const REGEX_CACHE = new Map<string, RE2JS>();

function compiledRegex(pattern: string): RE2JS {
  let re = REGEX_CACHE.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
    if (REGEX_CACHE.size >= 256) REGEX_CACHE.clear();
    REGEX_CACHE.set(pattern, re);
  }
  return re;
}

/** The SQL function `matches` compiles to: RE2 semantics (linear time, no backtracking), case-insensitive. */
export const REGEXP_FUNCTION = 'svc_regexp';

/** Registers the regular expression function on a connection (idempotent per connection). */
export function registerFilterFunctions(client: Database.Database): void {
  client.function(REGEXP_FUNCTION, { deterministic: true }, (pattern: unknown, value: unknown) => {
    if (typeof pattern !== 'string' || (typeof value !== 'string' && typeof value !== 'number')) return null;
    return compiledRegex(pattern).matcher(String(value)).find() ? 1 : 0;
  });
}

// ---- values ----

type Problems = string[];

function stringValue(v: unknown, field: string, problems: Problems): string | undefined {
  if (typeof v === 'string' && v.length <= MAX_TEXT) return v;
  problems.push(`Invalid value for field ${field}: expected a string of at most ${MAX_TEXT} characters`);
  return undefined;
}

function stringList(v: unknown, field: string, problems: Problems): string[] | undefined {
  if (Array.isArray(v) && v.length > 0 && v.length <= MAX_LIST && v.every((x) => typeof x === 'string' && x.length <= MAX_TEXT)) return v as string[];
  problems.push(`Invalid value for field ${field}: expected a non-empty array of strings (at most ${MAX_LIST})`);
  return undefined;
}

function numberValue(v: unknown, field: string, problems: Problems): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  problems.push(`Invalid value for field ${field}: expected a number`);
  return undefined;
}

function rangeOf<T>(v: unknown, field: string, problems: Problems, each: (x: unknown) => T | undefined, what: string): [T, T] | undefined {
  if (isObject(v) && 'from' in v && 'to' in v) {
    const from = each(v.from);
    const to = each(v.to);
    if (from !== undefined && to !== undefined) return [from, to];
  }
  problems.push(`Invalid value for field ${field}: between needs {from, to} ${what}`);
  return undefined;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const FOUR_DIGIT_YEAR = /^\d{4}-/;

/** A date value as an inclusive instant range: a date-only value is that whole UTC day, a timestamp is itself. */
function instantRange(v: unknown): [string, string] | undefined {
  if (typeof v !== 'string' || v.length > 64) return undefined;
  const ms = Date.parse(DATE_ONLY.test(v) ? `${v}T00:00:00.000Z` : v);
  if (!Number.isFinite(ms)) return undefined;
  const start = new Date(ms).toISOString();
  const end = DATE_ONLY.test(v) ? new Date(ms + 86_400_000 - 1).toISOString() : start;
  // Stored timestamps are compared as text: outside years 0000–9999 toISOString answers ±YYYYYY, which sorts wrong.
  if (!FOUR_DIGIT_YEAR.test(start) || !FOUR_DIGIT_YEAR.test(end)) return undefined;
  return [start, end];
}

function dateValue(v: unknown, field: string, problems: Problems): [string, string] | undefined {
  const range = instantRange(v);
  if (!range) problems.push(`Invalid value for field ${field}: expected an ISO 8601 date or timestamp`);
  return range;
}

/** `now` minus {amount, unit}; months are calendar months. */
function cutoffOf(v: unknown, field: string, now: Date, problems: Problems): string | undefined {
  if (isObject(v) && Number.isInteger(v.amount) && (v.amount as number) > 0 && (v.amount as number) <= 100_000 && UNITS.includes(v.unit as never)) {
    const amount = v.amount as number;
    const unit = v.unit as (typeof UNITS)[number];
    if (unit === 'months') {
      const d = new Date(now);
      d.setUTCMonth(d.getUTCMonth() - amount);
      return d.toISOString();
    }
    return new Date(now.getTime() - amount * UNIT_MS[unit]).toISOString();
  }
  problems.push(`Invalid value for field ${field}: expected {amount: positive integer, unit: ${UNITS.join('|')}}`);
  return undefined;
}

const like = (e: SQLWrapper, pattern: string) => sql`(${e} LIKE ${pattern} ESCAPE '\\')`;
const lowerIn = (e: SQLWrapper, list: string[]) => sql`(lower(${e}) IN (SELECT lower(value) FROM json_each(${JSON.stringify(list)})))`;
/** "not" of a test that is null for a null column: a device without the value is not equal to anything. */
const notOrNull = (e: SQLWrapper, test: SQL) => sql`(${e} IS NULL OR NOT ${test})`;
const TRUE = sql`1 = 1`;

// ---- per-type compilation ----

function compileString(field: string, e: SQLWrapper, op: string, value: unknown, p: Problems): SQL | undefined {
  switch (op) {
    case 'isNull':
      return sql`(${e} IS NULL OR ${e} = '')`;
    case 'isNotNull':
      return sql`(${e} IS NOT NULL AND ${e} <> '')`;
    case 'in':
    case 'notIn': {
      const list = stringList(value, field, p);
      if (!list) return undefined;
      return op === 'in' ? lowerIn(e, list) : notOrNull(e, lowerIn(e, list));
    }
    case 'matches': {
      const pattern = stringValue(value, field, p);
      if (pattern === undefined) return undefined;
      if (pattern.length > MAX_REGEX_LENGTH) {
        p.push(`Regex pattern too long for field ${field} (max ${MAX_REGEX_LENGTH} characters)`);
        return undefined;
      }
      try {
        compiledRegex(pattern);
      } catch {
        p.push(`Invalid regex pattern for field ${field}`);
        return undefined;
      }
      return sql`(${sql.raw(REGEXP_FUNCTION)}(${pattern}, ${e}) = 1)`;
    }
    default: {
      const text = stringValue(value, field, p);
      if (text === undefined) return undefined;
      const lit = likeEscape(text);
      const tests: Record<string, SQL> = {
        equals: sql`(lower(${e}) = lower(${text}))`,
        notEquals: notOrNull(e, sql`(lower(${e}) = lower(${text}))`),
        contains: like(e, `%${lit}%`),
        notContains: notOrNull(e, like(e, `%${lit}%`)),
        startsWith: like(e, `${lit}%`),
        endsWith: like(e, `%${lit}`),
      };
      return own(tests, op);
    }
  }
}

function compileEnum(field: string, e: SQLWrapper, op: string, value: unknown, p: Problems): SQL | undefined {
  const allowed = own(ENUMS, field) ?? [];
  const check = (v: string) => {
    if (!allowed.includes(v)) p.push(`Invalid value for field ${field}: expected one of ${allowed.join(', ')}`);
  };
  if (op === 'in' || op === 'notIn') {
    const list = stringList(value, field, p);
    if (!list) return undefined;
    list.forEach(check);
    const inList = sql`(${e} IN (SELECT value FROM json_each(${JSON.stringify(list)})))`;
    return op === 'in' ? inList : notOrNull(e, inList);
  }
  const v = stringValue(value, field, p);
  if (v === undefined) return undefined;
  check(v);
  return op === 'equals' ? sql`(${e} = ${v})` : notOrNull(e, sql`(${e} = ${v})`);
}

function compileDatetime(field: string, e: SQLWrapper, op: string, value: unknown, now: Date, p: Problems): SQL | undefined {
  if (op === 'isNull') return sql`(${e} IS NULL)`;
  if (op === 'isNotNull') return sql`(${e} IS NOT NULL)`;
  if (op === 'withinLast' || op === 'notWithinLast') {
    const cutoff = cutoffOf(value, field, now, p);
    if (cutoff === undefined) return undefined;
    return op === 'withinLast' ? sql`(${e} >= ${cutoff})` : sql`(${e} IS NULL OR ${e} < ${cutoff})`;
  }
  if (op === 'between') {
    const range = rangeOf(value, field, p, instantRange, 'ISO 8601 dates');
    if (!range) return undefined;
    return sql`(${e} >= ${range[0][0]} AND ${e} <= ${range[1][1]})`;
  }
  const range = dateValue(value, field, p);
  if (!range) return undefined;
  const [start, end] = range;
  const within = sql`(${e} >= ${start} AND ${e} <= ${end})`;
  const tests: Record<string, SQL> = {
    equals: within,
    notEquals: notOrNull(e, within),
    before: sql`(${e} < ${start})`,
    after: sql`(${e} > ${end})`,
  };
  return own(tests, op);
}

function compileNumber(field: string, e: SQLWrapper, op: string, value: unknown, p: Problems): SQL | undefined {
  if (op === 'isNull') return sql`(${e} IS NULL)`;
  if (op === 'isNotNull') return sql`(${e} IS NOT NULL)`;
  if (op === 'between') {
    const range = rangeOf(value, field, p, (x) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined), 'numbers');
    return range && sql`(${e} BETWEEN ${range[0]} AND ${range[1]})`;
  }
  const n = numberValue(value, field, p);
  if (n === undefined) return undefined;
  const tests: Record<string, SQL> = {
    equals: sql`(${e} = ${n})`,
    notEquals: notOrNull(e, sql`(${e} = ${n})`),
    greaterThan: sql`(${e} > ${n})`,
    greaterThanOrEquals: sql`(${e} >= ${n})`,
    lessThan: sql`(${e} < ${n})`,
    lessThanOrEquals: sql`(${e} <= ${n})`,
  };
  return own(tests, op);
}

function booleanValue(v: unknown, field: string, p: Problems): boolean | undefined {
  if (typeof v === 'boolean') return v;
  p.push(`Invalid value for field ${field}: expected true or false`);
  return undefined;
}

/** Booleans and flags: a device without the value counts as false. */
function compileBoolean(field: string, truth: SQL, op: string, value: unknown, p: Problems): SQL | undefined {
  const b = booleanValue(value, field, p);
  if (b === undefined) return undefined;
  const wantTrue = op === 'equals' ? b : !b;
  return wantTrue ? sql`(${truth})` : sql`(NOT coalesce(${truth}, 0))`;
}

/**
 * Does the JSON array column hold an element equal (case-insensitive) to one of `list`? The arrays are written by
 * JSON.stringify, so an element `x` appears in the text as JSON.stringify(x): a substring test on the lower-cased
 * text is exact for elements without quotes and far cheaper than json_each per row (bench/filters.js).
 */
const element = (e: SQLWrapper, item: string) => sql`instr(lower(${e}), ${JSON.stringify(item.toLowerCase())}) > 0`;
const hasAnyOf = (e: SQLWrapper, list: string[]) => sql`(${sql.join([...new Set(list)].map((x) => element(e, x)), sql` OR `)})`;
const hasAllOf = (e: SQLWrapper, list: string[]) => sql`(${sql.join([...new Set(list.map((x) => x.toLowerCase()))].map((x) => element(e, x)), sql` AND `)})`;
const anyLike = (e: SQLWrapper, text: string) => sql`(EXISTS (SELECT 1 FROM json_each(${e}) AS t WHERE t.value LIKE ${containsPattern(text)} ESCAPE '\\'))`;

function compileArray(field: string, e: SQLWrapper, op: string, value: unknown, p: Problems): SQL | undefined {
  if (op === 'isEmpty') return sql`(json_array_length(${e}) = 0)`;
  if (op === 'isNotEmpty') return sql`(json_array_length(${e}) > 0)`;
  if (op === 'contains') {
    const v = stringValue(value, field, p);
    return v === undefined ? undefined : hasAnyOf(e, [v]);
  }
  const list = stringList(value, field, p);
  if (!list) return undefined;
  return op === 'hasAny' ? hasAnyOf(e, list) : hasAllOf(e, list);
}

/** software.installed / notInstalled over the names the agent reports (stored lower-cased). */
function compileSoftware(field: string, e: SQLWrapper, op: string, value: unknown, negate: boolean, p: Problems): SQL | undefined {
  let test: SQL | undefined;
  if (op === 'contains' || op === 'notContains') {
    const v = stringValue(value, field, p);
    test = v === undefined ? undefined : anyLike(e, v);
    if (test && op === 'notContains') test = sql`(NOT ${test})`;
  } else if (op === 'equals') {
    const v = stringValue(value, field, p);
    test = v === undefined ? undefined : hasAnyOf(e, [v]);
  } else {
    const list = stringList(value, field, p);
    test = !list ? undefined : op === 'hasAll' ? hasAllOf(e, list) : hasAnyOf(e, list);
  }
  return test && negate ? sql`(NOT ${test})` : test;
}

function compileHierarchy(field: string, e: SQLWrapper, op: string, value: unknown, p: Problems): SQL | undefined {
  const list = op === 'in' ? stringList(value, field, p) : (() => {
    const v = stringValue(value, field, p);
    return v === undefined ? undefined : [v];
  })();
  if (!list) return undefined;
  const ids = JSON.stringify(list);
  if (field === 'groupId') return inDeviceGroups(list);
  return sql`(${e} IN (SELECT value FROM json_each(${ids})))`;
}

/** Devices that are members of any of these groups: the `groupId` field and the caller's deviceGroupIds
 * restriction (01 §2.6) are the same condition. */
export function inDeviceGroups(groupIds: readonly string[]): SQL {
  return sql`(${devices.id} IN (SELECT ${deviceGroupMembers.deviceId} FROM ${deviceGroupMembers} WHERE ${deviceGroupMembers.groupId} IN (SELECT value FROM json_each(${JSON.stringify(groupIds)}))))`;
}

// ---- the tree ----

export interface CompileOptions {
  /** The evaluation instant (withinLast, daysSince…); default now. */
  now?: Date;
  /** The error message of an invalid tree (groups say `Invalid filter conditions`). */
  message?: string;
}

interface Walk {
  problems: Problems;
  now: Date;
  count: number;
  fields: Set<string>;
}

function compileCondition(c: Record<string, unknown>, w: Walk): SQL | undefined {
  const field = c.field;
  const op = c.operator;
  const p = w.problems;
  if (typeof field !== 'string' || typeof op !== 'string') {
    p.push('A condition needs a field and an operator (strings)');
    return undefined;
  }
  let def = own(FIELDS, field);
  if (field.startsWith('custom.')) {
    const key = field.slice('custom.'.length);
    if (!CUSTOM_KEY.test(key)) {
      p.push(`Invalid custom field key: ${field}`);
      return undefined;
    }
    def = { type: 'string', expr: () => sql`json_extract(${devices.customFields}, ${`$."${key}"`})` };
  } else if (!def || !FIELD_KEY_PATTERN.test(field)) {
    p.push(`Unknown field: ${field}`);
    return undefined;
  }
  if (!(own(OPERATORS, def.type) ?? []).includes(op)) {
    p.push(`Operator ${op} not valid for field ${field}`);
    return undefined;
  }
  w.fields.add(field);
  const expr = def.expr(w.now.toISOString());
  const value = c.value;
  switch (def.type) {
    case 'string':
      return compileString(field, expr, op, value, p);
    case 'enum':
      return compileEnum(field, expr, op, value, p);
    case 'datetime':
      return compileDatetime(field, expr, op, value, w.now, p);
    case 'number':
      return compileNumber(field, expr, op, value, p);
    case 'boolean':
      return compileBoolean(field, sql`${expr} = 1`, op, value, p);
    case 'flag':
      return compileBoolean(field, expr as SQL, op, value, p);
    case 'array':
      return compileArray(field, expr, op, value, p);
    case 'softwareInstalled':
      return compileSoftware(field, expr, op, value, false, p);
    case 'softwareNotInstalled':
      return compileSoftware(field, expr, op, value, true, p);
    case 'hierarchy':
      return compileHierarchy(field, expr, op, value, p);
  }
}

function compileGroup(g: unknown, depth: number, w: Walk): SQL | undefined {
  if (!isObject(g) || (g.operator !== 'AND' && g.operator !== 'OR') || !Array.isArray(g.conditions) || g.conditions.length === 0) {
    w.problems.push('A group needs operator AND or OR and at least one condition');
    return undefined;
  }
  if (depth > MAX_DEPTH) {
    w.problems.push(`Groups nest at most ${MAX_DEPTH} deep`);
    return undefined;
  }
  const parts: SQL[] = [];
  for (const c of g.conditions) {
    if (++w.count > MAX_CONDITIONS) {
      w.problems.push(`A filter has at most ${MAX_CONDITIONS} conditions`);
      return undefined;
    }
    const part = isObject(c) && isGroup(c) ? compileGroup(c, depth + 1, w) : isObject(c) ? compileCondition(c, w) : undefined;
    if (!isObject(c)) w.problems.push('A condition must be an object');
    if (part) parts.push(part);
  }
  const joined = g.operator === 'AND' ? and(...parts) : or(...parts);
  return joined ? sql`(${joined})` : TRUE;
}

export interface CompiledFilter {
  where: SQL;
  /** The field keys the tree uses (groups record them as filterFieldsUsed). */
  fields: string[];
}

/**
 * Validates and compiles a condition tree. Throws {@link FilterError} (400 `Invalid filter`, the problems in
 * `details`) when any field, operator or value is wrong; never returns a partial query.
 */
export function compileFilter(tree: unknown, options: CompileOptions = {}): CompiledFilter {
  const w: Walk = { problems: [], now: options.now ?? new Date(), count: 0, fields: new Set() };
  const where = compileGroup(tree, 1, w);
  if (w.problems.length > 0 || !where) throw new FilterError(options.message ?? 'Invalid filter', [...new Set(w.problems)]);
  return { where, fields: [...w.fields] };
}
