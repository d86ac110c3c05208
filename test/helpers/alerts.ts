import { expect } from 'vitest';
import type { TestApp } from './server.js';

const API = '/api/v1';

export interface Agent {
  deviceId: string;
  agentId: string;
  token: string;
}

/** Enrolls a device into the organization (and site) with a fresh enrollment key, as an agent does. */
export async function enrollAgent(t: TestApp, systemToken: string, orgId: string, hostname: string, siteId?: string): Promise<Agent> {
  const key = await t.call('POST', `${API}/enrollment-keys`, { token: systemToken, body: { orgId, name: `key-${hostname}`, ...(siteId ? { siteId } : {}) } });
  expect(key.status).toBe(201);
  const res = await t.call('POST', `${API}/agents/enroll`, {
    body: { enrollmentKey: key.body.key, hostname, osType: 'linux', osVersion: 'Debian 12', architecture: 'x86_64', agentVersion: '1.0.0' },
  });
  expect(res.status).toBe(201);
  return { deviceId: res.body.deviceId, agentId: res.body.agentId, token: res.body.authToken };
}

/** Reports one sample every 30 s of [from, to] (Unix ms), each with the value given for its time. */
export async function reportSeries(
  t: TestApp,
  agent: Agent,
  metric: string,
  value: number | string | ((at: number) => number | string),
  from: number,
  to: number,
  serviceName?: string,
): Promise<number> {
  const samples = [];
  for (let at = from; at <= to; at += 30_000) {
    samples.push({ metric, value: typeof value === 'function' ? value(at) : value, timestamp: new Date(at).toISOString(), ...(serviceName ? { serviceName } : {}) });
  }
  const res = await t.call('POST', `${API}/agents/${agent.agentId}/metrics`, { token: agent.token, body: { samples } });
  expect(res.status, res.text).toBe(202);
  return res.body.accepted as number;
}

/** The evaluation instant a run at `now` evaluates (multiples of 30 s, 15 s behind). */
export const instantOf = (now: number) => Math.floor((now - 15_000) / 30_000) * 30_000;
