import { expect, it } from 'vitest';
import { systemContext } from '../../src/server/context.js';
import { type ReadCache } from '../../src/server/lib/read-cache.js';
import { sha256Hex } from '../../src/server/security/crypto.js';
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

/** modules/api-keys/authenticator.ts: a key stays kept across writes that cannot change it, and every write that
 * can (revocation, scopes, rotation, organization, partner) refuses or changes it at the very next request. */
it('01§5.2 §5.4 a kept key survives unrelated writes; a revocation, scope change or rotation applies at once', async () => {
  const t: TestApp = await createTestApp();
  try {
    const { tenancy, apiKeys, apiKeyAuth } = t.services;
    const ctx = systemContext();
    const partner = tenancy.createPartner(ctx, { name: 'P', slug: 'p-kept' });
    const org = tenancy.createOrganization(ctx, { partnerId: partner.id, name: 'O', slug: 'o-kept' });
    const key = apiKeys.create(ctx, { orgId: org.id, name: 'k', scopes: ['sites:read'] });
    const other = apiKeys.create(ctx, { orgId: org.id, name: 'other', scopes: ['sites:read'] });
    // The cache keeps nothing while a group transaction is open (db/group-commit.ts): what the checks below call
    // kept is kept once the writes before them are committed, as at the end of a request's turn.
    const commit = () => t.commits.flush();
    const kept = (raw: string) =>
      (apiKeyAuth as unknown as { keysByHash: ReadCache<unknown> }).keysByHash.lookup(sha256Hex(raw)) !== undefined;
    const refusal = (raw: string) => {
      try {
        apiKeyAuth.authenticate(raw);
        return undefined;
      } catch (err) {
        return (err as { code?: string }).code;
      }
    };

    commit();
    const first = apiKeyAuth.authenticate(key.key).caller;
    expect(kept(key.key)).toBe(true);
    // A site, the usage flush (usage_count, last_used_at of the key itself): the key stays kept.
    tenancy.createSite(ctx, { orgId: org.id, name: 'S' });
    apiKeyAuth.flush();
    commit();
    expect(kept(key.key)).toBe(true);
    expect(apiKeyAuth.authenticate(key.key).caller).toBe(first);

    // Scopes changed: the next request acts with the new ones.
    apiKeys.update(ctx, key.id, { scopes: ['devices:read'] });
    expect(kept(key.key)).toBe(false);
    expect(apiKeyAuth.authenticate(key.key).caller?.permissions).toEqual(['devices:read']);

    // A revocation inside a transaction that rolls back changes nothing; a committed one refuses at once.
    apiKeyAuth.authenticate(other.key);
    expect(() =>
      t.db.$client.transaction(() => {
        apiKeys.revoke(ctx, other.id);
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    expect(refusal(other.key)).toBeUndefined();
    apiKeys.revoke(ctx, other.id);
    expect(refusal(other.key)).toBe('API_KEY_REVOKED');

    // Rotation: the old secret is unknown at once, the new one works.
    const rotated = apiKeys.rotate(ctx, key.id);
    expect(refusal(key.key)).toBe('INVALID_API_KEY');
    expect(apiKeyAuth.authenticate(rotated.key).caller?.apiKeyId).toBe(key.id);

    // The partner suspended: the caller says so at once (the guard refuses it with PARTNER_INACTIVE).
    tenancy.updatePartner(ctx, partner.id, { status: 'suspended' });
    expect(apiKeyAuth.authenticate(rotated.key).caller?.partnerStatus).toBe('suspended');
  } finally {
    await t.close();
  }
});
