import { ApiError } from '../client/errors.js';

/** What the `svc pam …` commands share (01 §4.9; CLI.md "Output"). */

export const RULE_COLUMNS = ['id', 'name', 'verdict', 'priority', 'enabled', 'siteId', 'suspendedVerdict', 'updatedAt'];
export const REQUEST_COLUMNS = [
  'id',
  'status',
  'flowType',
  'deviceHostname',
  'subjectUsername',
  'targetExecutablePath',
  'toolName',
  'riskTier',
  'requestedAt',
  'expiresAt',
];
export const DECISION_COLUMNS = ['id', 'status', 'enforcementStatus', 'expiresAt', 'reason'];
export const SIGNER_GROUP_COLUMNS = ['id', 'name', 'signers', 'thumbprints', 'updatedAt'];
export const CONFIG_COLUMNS = ['orgId', 'defaultUnmatchedVerdict', 'defaultApprovalDurationMinutes', 'updatedAt'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The factor a 401 `reauth_required` asks for (the server says which: `password` or `mfa_code`); undefined for
 * any other error. */
export function reauthFactor(err: unknown): 'password' | 'mfa_code' | undefined {
  if (!(err instanceof ApiError) || err.status !== 401 || err.code !== 'reauth_required') return undefined;
  return isRecord(err.body) && err.body.factor === 'mfa_code' ? 'mfa_code' : 'password';
}

/** A one-line description of an elevation request for a confirmation prompt. */
export function describeRequest(request: unknown): string | undefined {
  if (!isRecord(request)) return undefined;
  const text = (key: string) => (typeof request[key] === 'string' ? request[key] : undefined);
  const what =
    request.flowType === 'ai_tool_action'
      ? `AI tool ${text('toolName') ?? '?'} (risk tier ${typeof request.riskTier === 'number' ? request.riskTier : '?'})`
      : (text('targetExecutablePath') ?? text('reason') ?? String(request.flowType));
  const who = text('subjectUsername');
  const where = text('deviceHostname');
  return `${what}${who ? ` for ${who}` : ''}${where ? ` on ${where}` : ''}`;
}
