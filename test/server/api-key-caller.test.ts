import { expect, it } from 'vitest';
import { systemContext } from '../../src/server/context.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

/** modules/api-keys/authenticator.ts: a key whose row reads the same after a write keeps its caller object. */
it('01§5.2 the caller of an unchanged key survives unrelated writes; a change to the key gives a new one', async () => {
  const t: TestApp = await createTestApp();
  try {
    const { tenancy, apiKeys, apiKeyAuth } = t.services;
    const ctx = systemContext();
    const partner = tenancy.createPartner(ctx, { name: 'P', slug: 'p-caller' });
    const org = tenancy.createOrganization(ctx, { partnerId: partner.id, name: 'O', slug: 'o' });
    const key = apiKeys.create(ctx, { orgId: org.id, name: 'k', scopes: ['sites:read'] });
    const first = apiKeyAuth.authenticate(key.key).caller;
    expect(first?.apiKeyId).toBe(key.id);
    // An unrelated write empties every kept read; the key is read again and reads the same.
    tenancy.createSite(ctx, { orgId: org.id, name: 'S' });
    const again = apiKeyAuth.authenticate(key.key).caller;
    expect(again).toBe(first);
    // The key's organization changes: a new caller that says so.
    tenancy.deleteOrganization(ctx, org.id);
    const after = apiKeyAuth.authenticate(key.key).caller;
    expect(after).not.toBe(first);
    expect(after?.partnerStatus).toBe('deleted');
  } finally {
    await t.close();
  }
});
