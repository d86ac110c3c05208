import { describe, expect, it } from 'vitest';
import { REFUSAL_REASON, decideIngest } from '../../src/server/modules/pam/ingest.js';

// The decision on an agent's request is a pure function of the matched rule, the defaults and the request.
const AT = '2026-01-01T00:00:00.000Z';
const defaults = { defaultUnmatchedVerdict: 'require_approval' as const, defaultApprovalDurationMinutes: null };
const uac = { flowType: 'uac_intercept' as const, targetExecutableHash: 'ab'.repeat(32) };
const rule = (
  verdict: 'auto_approve' | 'auto_deny' | 'require_approval' | 'ignore',
  minutes: number | null = null,
) => ({
  verdict,
  name: 'R',
  approvalDurationMinutes: minutes,
});

describe('04 Rule engine: the ingest decision', () => {
  it('04 Rule engine: ignore records nothing', () => {
    expect(decideIngest(rule('ignore'), defaults, uac, AT)).toEqual({ ignored: true, verdict: 'ignore' });
  });

  it("04 Rule engine: auto_approve lasts the rule's minutes, else the default, else 15", () => {
    const approved = decideIngest(rule('auto_approve', 30), defaults, uac, AT);
    expect(approved).toMatchObject({
      ignored: false,
      refused: false,
      fields: {
        status: 'auto_approved',
        enforcementStatus: 'pending_dispatch',
        decisionSource: 'pam_rule',
        approvedAt: AT,
        expiresAt: '2026-01-01T00:30:00.000Z',
      },
    });
    const byDefault = decideIngest(rule('auto_approve'), { ...defaults, defaultApprovalDurationMinutes: 5 }, uac, AT);
    expect(byDefault).toMatchObject({ fields: { expiresAt: '2026-01-01T00:05:00.000Z' } });
    expect(decideIngest(rule('auto_approve'), defaults, uac, AT)).toMatchObject({
      fields: { expiresAt: '2026-01-01T00:15:00.000Z' },
    });
  });

  it('01§3 an auto-approval of a UAC prompt without a file hash is refused', () => {
    const refused = decideIngest(rule('auto_approve'), defaults, { ...uac, targetExecutableHash: null }, AT);
    expect(refused).toMatchObject({
      refused: true,
      fields: { status: 'denied', enforcementStatus: 'refused', denialReason: REFUSAL_REASON },
    });
    // AI tool actions carry no executable hash and are not refused for it.
    const tool = decideIngest(
      rule('auto_approve'),
      defaults,
      { flowType: 'ai_tool_action', targetExecutableHash: null },
      AT,
    );
    expect(tool).toMatchObject({ refused: false, fields: { status: 'auto_approved' } });
  });

  it('04 Rule engine: auto_deny names the rule; no rule falls back to the organization default', () => {
    expect(decideIngest(rule('auto_deny'), defaults, uac, AT)).toMatchObject({
      fields: { status: 'denied', denialReason: 'Denied by rule "R"', deniedAt: AT },
    });
    expect(decideIngest(null, defaults, uac, AT)).toMatchObject({
      verdict: 'require_approval',
      fields: { status: 'pending' },
    });
    expect(decideIngest(null, { ...defaults, defaultUnmatchedVerdict: 'auto_deny' }, uac, AT)).toMatchObject({
      fields: { status: 'denied', denialReason: 'Denied by the organization default (no rule matched)' },
    });
  });
});
