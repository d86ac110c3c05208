import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { AlertEventPayloadSchema, parseAlertEvent, readAlertEvent } from '../../src/server/modules/notifications/alert-event.js';

/** The zod schema readAlertEvent replaces (a `.catch()` per optional field): the reference it must agree with. */
const Reference = z.object({
  alertId: z.string().min(1),
  orgId: z.string().min(1),
  orgName: z.string().catch(''),
  ruleId: z.string().nullable().catch(null),
  ruleName: z.string().nullable().catch(null),
  templateId: z.string().nullable().catch(null),
  deviceId: z.string().nullable().catch(null),
  deviceName: z.string().nullable().catch(null),
  severity: z.enum(['critical', 'high', 'medium', 'low', 'info']).catch('info'),
  status: z.string().catch('active'),
  title: z.string().catch('Alert'),
  message: z.string().catch(''),
  context: z.record(z.string(), z.unknown()).catch({}),
  triggeredAt: z.string().catch(() => new Date().toISOString()),
  notificationChannelIds: z.array(z.string()).nullable().catch(null),
  escalationPolicyId: z.string().nullable().catch(null),
  actorUserId: z.string().nullable().catch(null),
});

const full = {
  alertId: 'a1',
  orgId: 'o1',
  orgName: 'Org One',
  ruleId: 'r1',
  ruleName: 'Disk rule',
  templateId: null,
  deviceId: 'd1',
  deviceName: 'web-01',
  severity: 'critical',
  status: 'acknowledged',
  title: 'Disk Space Low',
  message: 'disk.freePercent 4 < 10',
  context: { freePercent: 4, nested: { a: [1] } },
  triggeredAt: '2026-01-01T00:00:00.000Z',
  notificationChannelIds: ['c1', 'c2'],
  escalationPolicyId: 'p1',
  actorUserId: 'u1',
};

const cases: Array<[string, unknown]> = [
  ['a full payload', full],
  ['a full payload with the fields an event adds (eventId, eventType, step)', { ...full, eventId: 'e1', eventType: 'alert.triggered', step: 2 }],
  ['only alertId and orgId', { alertId: 'a1', orgId: 'o1' }],
  ['every optional field null', Object.fromEntries(Object.entries(full).map(([k, v]) => [k, k === 'alertId' || k === 'orgId' ? v : null]))],
  ['every optional field of the wrong type', Object.fromEntries(Object.entries(full).map(([k, v]) => [k, k === 'alertId' || k === 'orgId' ? v : 42]))],
  ['an unknown severity', { ...full, severity: 'CRITICAL' }],
  ['context an array', { ...full, context: [1, 2] }],
  ['context a string', { ...full, context: 'x' }],
  ['an empty context', { ...full, context: {} }],
  ['channel ids with a number', { ...full, notificationChannelIds: ['c1', 7] }],
  ['no channel ids (empty list)', { ...full, notificationChannelIds: [] }],
  ['channel ids an object', { ...full, notificationChannelIds: { 0: 'c1' } }],
  ['no alertId', { ...full, alertId: undefined }],
  ['an empty alertId', { ...full, alertId: '' }],
  ['a numeric orgId', { ...full, orgId: 5 }],
  ['no orgId', { alertId: 'a1' }],
  ["the webhook bench's event (no alertId)", { orgId: 'o1', phase: 'throughput', seq: 3, sentAt: 1 }],
  ['null', null],
  ['a string', 'alert'],
  ['an array', [full]],
  ['an empty object', {}],
];

describe('alert event payloads read at the boundary (ALERT-EVENTS.md, issue 12)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-02-03T04:05:06.000Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  for (const [name, input] of cases) {
    it(`ALERT-EVENTS the same result as the zod schema it replaces: ${name}`, () => {
      const expected = Reference.safeParse(input);
      const read = readAlertEvent(input);
      if (expected.success) {
        expect(read).toStrictEqual(expected.data);
        expect(AlertEventPayloadSchema.parse(input)).toStrictEqual(expected.data);
        expect(parseAlertEvent(input)).toStrictEqual(expected.data);
      } else {
        expect(read).toBeUndefined();
        expect(AlertEventPayloadSchema.safeParse(input).success).toBe(false);
        expect(() => parseAlertEvent(input)).toThrow(/alertId and orgId/);
      }
    });
  }

  it('ALERT-EVENTS a missing triggeredAt is now; the result shares no array or object with the input', () => {
    const input = { alertId: 'a1', orgId: 'o1', context: { a: 1 }, notificationChannelIds: ['c1'] };
    const read = readAlertEvent(input);
    expect(read?.triggeredAt).toBe('2026-02-03T04:05:06.000Z');
    expect(read?.context).not.toBe(input.context);
    expect(read?.notificationChannelIds).not.toBe(input.notificationChannelIds);
  });
});
