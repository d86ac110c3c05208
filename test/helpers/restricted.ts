import { expect } from 'vitest';
import { seedUser, seedWorld, type World } from './seed.js';
import type { TestApp } from './server.js';
import { SimulatedAgent } from './simulated-agent.js';

/** The 01 §2.6 restriction fixture: organization A1 of the seeded world with three linux agents, web-in and web-out
 * at site A1a and web-b at site A1b; the group Mine (web-in alone) made by the unrestricted Org Admin; and groupUser,
 * an Org Admin of A1 restricted to Mine (the world's siteUser is restricted to site A1a). */
export interface RestrictedWorld {
  w: World;
  inGroup: SimulatedAgent;
  outside: SimulatedAgent;
  otherSite: SimulatedAgent;
  groupId: string;
  groupUser: string;
}

export async function seedRestrictedWorld(t: TestApp): Promise<RestrictedWorld> {
  const w = await seedWorld(t, { mfa: true });
  const enroll = (hostname: string, siteId: string) => SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname, osType: 'linux', siteId });
  const inGroup = await enroll('web-in', w.siteA1a.id);
  const outside = await enroll('web-out', w.siteA1a.id);
  const otherSite = await enroll('web-b', w.siteA1b.id);
  const group = await t.call('POST', '/api/v1/groups', { token: w.tokens.orgUser, body: { name: 'Mine', deviceIds: [inGroup.deviceId] } });
  expect(group.status, group.text).toBe(201);
  const groupId = group.body.data.id as string;
  const groupUser = (await seedUser(t, { email: 'grouped@a1.test', org: { orgId: w.orgA1.id, deviceGroupIds: [groupId] }, login: 'mint', mfa: true })).token;
  return { w, inGroup, outside, otherSite, groupId, groupUser };
}
