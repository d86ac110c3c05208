import type { ElevationFlowType, PamNegatable, PamVerdict, TimeWindow } from '../../../contract/pam.js';

/**
 * The elevation rule engine (01 §4.9, 04 wire notes "Rule engine"): pure functions, no database.
 *
 * - Rules are tried in order (priority, then createdAt, then id); the first that matches wins.
 * - Every criterion a rule sets must match. Matching is case-insensitive.
 * - Path globs and parent images match the whole string; `\` counts as `/`; `*` matches within one folder
 *   (never `/`), `**` matches across folders (any characters, `/` included, possibly none); every other
 *   character is literal (`?`, `[` included). So `C:/**` + `/x.exe` needs at least one `/` between them.
 * - The command line criterion is a substring.
 * - A negated criterion inverts only when the request carries the data: missing data never matches.
 * - The time window is read in its time zone (default UTC) at the request's observed time, to the minute,
 *   bounds inclusive; start > end wraps past midnight; for a wrapped window the weekday is the one the window
 *   started on (Friday 22:00-06:00 covers Saturday 02:00, not Friday 02:00); start = end is that one minute.
 * - Executable rules (signer, signer group, thumbprint, hash, path, parent image, command line) apply to
 *   uac_intercept requests only, tool-action rules (tool name, risk tier) to ai_tool_action requests only;
 *   a rule narrowed only by user or directory group applies to both, except that `ignore` never applies to an
 *   AI tool action (a tool action is always recorded).
 * - No rule applies to a technician's request for administrator rights (tech_jit_admin): rules never decide a
 *   person's own request for administrator rights; an approver does.
 */

/** The requests rules decide (the agent's): UAC prompts and AI tool actions. */
export const RULE_DECIDED_FLOW_TYPES = [
  'uac_intercept',
  'ai_tool_action',
] as const satisfies readonly ElevationFlowType[];

export interface RuleCriteria {
  matchSigner: string | null;
  matchSignerGroupId: string | null;
  matchSignerThumbprint: string | null;
  matchHash: string | null;
  matchPathGlob: string | null;
  matchParentImage: string | null;
  matchCommandLine: string | null;
  matchUser: string | null;
  matchAdGroup: string | null;
  matchToolName: string | null;
  matchRiskTier: number | null;
  matchNegate: PamNegatable[] | null;
  timeWindow: TimeWindow | null;
}

export interface EngineRule extends RuleCriteria {
  id: string;
  name: string;
  verdict: PamVerdict;
  priority: number;
  createdAt: string;
  siteId: string | null;
  enabled: boolean;
}

/** What a request offers to match against; null is "the request does not carry this". */
export interface EngineRequest {
  flowType: ElevationFlowType;
  subjectUsername: string | null;
  subjectGroups: readonly string[] | null;
  targetExecutablePath: string | null;
  targetExecutableHash: string | null;
  targetExecutableSigner: string | null;
  targetExecutableSignerThumbprint: string | null;
  parentImage: string | null;
  commandLine: string | null;
  toolName: string | null;
  riskTier: number | null;
  observedAt: Date;
}

export interface SignerGroupData {
  signers: readonly string[];
  thumbprints: readonly string[];
}

export type RuleKind = 'executable' | 'tool' | 'neutral';

export const EXECUTABLE_CRITERIA = [
  'matchSigner',
  'matchSignerGroupId',
  'matchSignerThumbprint',
  'matchHash',
  'matchPathGlob',
  'matchParentImage',
  'matchCommandLine',
] as const;
export const TOOL_CRITERIA = ['matchToolName', 'matchRiskTier'] as const;
export const NEUTRAL_CRITERIA = ['matchUser', 'matchAdGroup'] as const;
export const IDENTIFYING_CRITERIA = [...EXECUTABLE_CRITERIA, ...TOOL_CRITERIA, ...NEUTRAL_CRITERIA] as const;

/** The field each matchNegate key inverts. */
export const NEGATE_FIELD: Readonly<Record<PamNegatable, (typeof IDENTIFYING_CRITERIA)[number]>> = {
  signer: 'matchSigner',
  signerGroup: 'matchSignerGroupId',
  hash: 'matchHash',
  pathGlob: 'matchPathGlob',
  parentImage: 'matchParentImage',
  commandLine: 'matchCommandLine',
  user: 'matchUser',
  adGroup: 'matchAdGroup',
  toolName: 'matchToolName',
  riskTier: 'matchRiskTier',
};

const isSet = (value: unknown): boolean => value !== null && value !== undefined;

export function ruleKind(rule: Partial<RuleCriteria>): RuleKind {
  if (EXECUTABLE_CRITERIA.some((k) => isSet(rule[k]))) return 'executable';
  if (TOOL_CRITERIA.some((k) => isSet(rule[k]))) return 'tool';
  return 'neutral';
}

// ---- glob ----

type GlobToken = { kind: 'char'; ch: string } | { kind: 'star' } | { kind: 'globstar' };

const globCache = new Map<string, GlobToken[]>();
const GLOB_CACHE_MAX = 1000;

function fold(value: string): string {
  return value.replace(/\\/g, '/').toLowerCase();
}

function compileGlob(glob: string): GlobToken[] {
  const cached = globCache.get(glob);
  if (cached) return cached;
  const source = fold(glob);
  const tokens: GlobToken[] = [];
  for (let i = 0; i < source.length; i++) {
    const ch = source.charAt(i);
    if (ch !== '*') {
      tokens.push({ kind: 'char', ch });
      continue;
    }
    let run = 1;
    while (source.charAt(i + run) === '*') run++;
    i += run - 1;
    tokens.push(run >= 2 ? { kind: 'globstar' } : { kind: 'star' });
  }
  if (globCache.size >= GLOB_CACHE_MAX) globCache.clear();
  globCache.set(glob, tokens);
  return tokens;
}

/**
 * Whole-string glob match, case-insensitive, `\` as `/`. Simulates the pattern's automaton over the subject
 * (a set of pattern positions), so the cost is at most pattern length × subject length whatever the pattern:
 * no regular expression, no catastrophic backtracking.
 */
export function globMatches(glob: string, subject: string): boolean {
  const tokens = compileGlob(glob);
  const text = fold(subject);
  const n = tokens.length;
  let active = new Uint8Array(n + 1);
  const close = (set: Uint8Array) => {
    // A star may match nothing: its successor is reachable too.
    for (let p = 0; p < n; p++) {
      if (set[p] && tokens[p]?.kind !== 'char') set[p + 1] = 1;
    }
  };
  active[0] = 1;
  close(active);
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    const next = new Uint8Array(n + 1);
    let any = false;
    for (let p = 0; p < n; p++) {
      if (!active[p]) continue;
      const token = tokens[p];
      if (!token) continue;
      if (token.kind === 'char') {
        if (token.ch === ch) {
          next[p + 1] = 1;
          any = true;
        }
      } else if (token.kind === 'globstar' || ch !== '/') {
        next[p] = 1;
        any = true;
      }
    }
    if (!any) return false;
    close(next);
    active = next;
  }
  return active[n] === 1;
}

// ---- time window ----

const formatters = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS: Readonly<Record<string, number>> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The weekday (0 = Sunday) and minute of the day of an instant in a time zone. */
export function localTime(at: Date, timeZone: string): { weekday: number; minute: number } {
  let weekday = 0;
  let hour = 0;
  let minute = 0;
  for (const part of formatterFor(timeZone).formatToParts(at)) {
    if (part.type === 'weekday') weekday = WEEKDAYS[part.value] ?? 0;
    else if (part.type === 'hour') hour = Number(part.value) % 24;
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { weekday, minute: hour * 60 + minute };
}

const minutesOf = (hhmm: string): number => {
  const [h = '0', m = '0'] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
};

export function inTimeWindow(window: TimeWindow, at: Date): boolean {
  const { weekday, minute } = localTime(at, window.timezone ?? 'UTC');
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  let day: number;
  if (start <= end) {
    if (minute < start || minute > end) return false;
    day = weekday;
  } else if (minute >= start) {
    day = weekday;
  } else if (minute <= end) {
    // After midnight of a window that wrapped: it belongs to the day it started on.
    day = (weekday + 6) % 7;
  } else {
    return false;
  }
  return window.days === undefined || window.days.includes(day);
}

// ---- criteria ----

const eqCi = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** One criterion: null when the request lacks the data (never a match), else whether it matches. */
type Check = () => boolean | null;

function criterionChecks(
  rule: RuleCriteria,
  req: EngineRequest,
  groups: ReadonlyMap<string, SignerGroupData>,
): [PamNegatable | null, Check][] {
  const checks: [PamNegatable | null, Check][] = [];
  const add = (key: PamNegatable | null, set: boolean, check: Check) => {
    if (set) checks.push([key, check]);
  };
  const {
    matchSigner,
    matchSignerGroupId,
    matchSignerThumbprint,
    matchHash,
    matchPathGlob,
    matchParentImage,
    matchCommandLine,
  } = rule;
  add('signer', matchSigner !== null, () =>
    req.targetExecutableSigner === null || matchSigner === null ? null : eqCi(req.targetExecutableSigner, matchSigner),
  );
  add('signerGroup', matchSignerGroupId !== null, () => {
    const group = matchSignerGroupId === null ? undefined : groups.get(matchSignerGroupId);
    const signer = req.targetExecutableSigner;
    const thumbprint = req.targetExecutableSignerThumbprint;
    if (!group || (signer === null && thumbprint === null)) return null;
    return (
      (signer !== null && group.signers.some((s) => eqCi(s, signer))) ||
      (thumbprint !== null && group.thumbprints.some((t) => eqCi(t, thumbprint)))
    );
  });
  add(null, matchSignerThumbprint !== null, () =>
    req.targetExecutableSignerThumbprint === null || matchSignerThumbprint === null
      ? null
      : eqCi(req.targetExecutableSignerThumbprint, matchSignerThumbprint),
  );
  add('hash', matchHash !== null, () =>
    req.targetExecutableHash === null || matchHash === null ? null : eqCi(req.targetExecutableHash, matchHash),
  );
  add('pathGlob', matchPathGlob !== null, () =>
    req.targetExecutablePath === null || matchPathGlob === null
      ? null
      : globMatches(matchPathGlob, req.targetExecutablePath),
  );
  add('parentImage', matchParentImage !== null, () =>
    req.parentImage === null || matchParentImage === null ? null : globMatches(matchParentImage, req.parentImage),
  );
  add('commandLine', matchCommandLine !== null, () =>
    req.commandLine === null || matchCommandLine === null
      ? null
      : req.commandLine.toLowerCase().includes(matchCommandLine.toLowerCase()),
  );
  const { matchUser, matchAdGroup, matchToolName, matchRiskTier } = rule;
  add('user', matchUser !== null, () =>
    req.subjectUsername === null || matchUser === null ? null : eqCi(req.subjectUsername, matchUser),
  );
  add('adGroup', matchAdGroup !== null, () =>
    req.subjectGroups === null || matchAdGroup === null ? null : req.subjectGroups.some((g) => eqCi(g, matchAdGroup)),
  );
  add('toolName', matchToolName !== null, () =>
    req.toolName === null || matchToolName === null ? null : eqCi(req.toolName, matchToolName),
  );
  add('riskTier', matchRiskTier !== null, () => (req.riskTier === null ? null : req.riskTier === matchRiskTier));
  return checks;
}

/** Whether the request has the kind of data the rule is about (see the module comment). */
export function ruleApplies(rule: RuleCriteria & { verdict?: PamVerdict }, flowType: ElevationFlowType): boolean {
  if (!(RULE_DECIDED_FLOW_TYPES as readonly ElevationFlowType[]).includes(flowType)) return false;
  const kind = ruleKind(rule);
  if (kind === 'executable') return flowType === 'uac_intercept';
  if (kind === 'tool') return flowType === 'ai_tool_action';
  if (rule.verdict === 'ignore' && flowType === 'ai_tool_action') return false;
  return true;
}

/** Whether every criterion of the rule matches the request (the rule's site and enabled flag are not
 * looked at here). A rule with no identifying criterion never matches. */
export function ruleMatches(
  rule: RuleCriteria & { verdict?: PamVerdict },
  req: EngineRequest,
  groups: ReadonlyMap<string, SignerGroupData>,
): boolean {
  if (!ruleApplies(rule, req.flowType)) return false;
  const checks = criterionChecks(rule, req, groups);
  if (checks.length === 0) return false;
  const negated = new Set(rule.matchNegate ?? []);
  for (const [key, check] of checks) {
    const result = check();
    if (result === null) return false;
    if ((key !== null && negated.has(key) ? !result : result) === false) return false;
  }
  if (rule.timeWindow && !inTimeWindow(rule.timeWindow, req.observedAt)) return false;
  return true;
}

/** Orders rules as the engine tries them: priority, then createdAt, then id. */
export function compareRules(
  a: Pick<EngineRule, 'priority' | 'createdAt' | 'id'>,
  b: Pick<EngineRule, 'priority' | 'createdAt' | 'id'>,
): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The first enabled rule (organization-wide or of the device's site) that matches, or null. */
export function firstMatchingRule<R extends EngineRule>(
  rules: readonly R[],
  req: EngineRequest,
  deviceSiteId: string | null,
  groups: ReadonlyMap<string, SignerGroupData>,
): R | null {
  const ordered = [...rules].sort(compareRules);
  for (const rule of ordered) {
    if (!rule.enabled) continue;
    if (rule.siteId !== null && rule.siteId !== deviceSiteId) continue;
    if (ruleMatches(rule, req, groups)) return rule;
  }
  return null;
}
