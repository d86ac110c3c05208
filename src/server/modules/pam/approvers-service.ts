import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { and, asc, eq, lt, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { ApproverDeviceRegisterSchema, WebAuthnAssertionSchema } from '../../../contract/pam.js';
import { transaction, type Db } from '../../db/connection.js';
import { insertRow, preparedQueries, rowQuery, updateRow } from '../../db/prepared.js';
import { pamApproverDevices, pamWebauthnChallenges } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { badRequest, conflict, notFound, unauthorized } from '../../errors.js';
import { recordAudit } from '../audit/recorder.js';

/** A user's approver devices, oldest first, prepared once per database. */
const devicesOfUser = preparedQueries((db) =>
  db.select().from(pamApproverDevices).where(eq(pamApproverDevices.userId, sql.placeholder('userId'))).orderBy(asc(pamApproverDevices.createdAt)).prepare(),
);

/** The statements of registration, assertion and deletion, prepared once per database: the challenges that
 * expired before `now` go; a user's challenge of a purpose is taken (deleted, returned); a credential already
 * registered (by anyone), one of the user's; one of the user's devices deleted (returned). */
const approverQueries = preparedQueries((db) => {
  const ofUser = eq(pamApproverDevices.userId, sql.placeholder('userId'));
  return {
    dropExpiredChallenges: db.delete(pamWebauthnChallenges).where(lt(pamWebauthnChallenges.expiresAt, sql.placeholder('now'))).prepare(),
    takeChallenge: db
      .delete(pamWebauthnChallenges)
      .where(
        and(
          eq(pamWebauthnChallenges.challenge, sql.placeholder('challenge')),
          eq(pamWebauthnChallenges.purpose, sql.placeholder('purpose')),
          eq(pamWebauthnChallenges.userId, sql.placeholder('userId')),
        ),
      )
      .returning()
      .prepare(),
    credential: db
      .select({ id: pamApproverDevices.id })
      .from(pamApproverDevices)
      .where(eq(pamApproverDevices.credentialId, sql.placeholder('credentialId')))
      .prepare(),
    credentialOfUser: rowQuery(db, pamApproverDevices, and(eq(pamApproverDevices.credentialId, sql.placeholder('credentialId')), ofUser)),
    deleteOfUser: db
      .delete(pamApproverDevices)
      .where(and(eq(pamApproverDevices.id, sql.placeholder('id')), ofUser))
      .returning()
      .prepare(),
  };
});

/** @simplewebauthn/server, loaded on first use: importing it costs a quarter of the server's start. */
const webauthn = () => import('@simplewebauthn/server');

/** 01 §8: an assertion challenge lives 120 seconds (registration challenges too). */
export const CHALLENGE_TTL_MS = 120_000;

export type ApproverDeviceRow = typeof pamApproverDevices.$inferSelect;

export interface RelyingParty {
  rpId: string;
  origins: string[];
}

const INVALID_PROOF = 'Invalid approval proof';

function challengeOf(clientDataJSON: string): string | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return null;
    const challenge = (parsed as Record<string, unknown>).challenge;
    return typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 1024 ? challenge : null;
  } catch {
    return null;
  }
}

/**
 * Platform approver devices (WebAuthn) of PAM approvers: registration, and the assertion challenge and proof
 * of 01 §4.9. A challenge is single use, lives 120 s and is bound to its user (and, for an assertion, to the
 * elevation request). A proof that does not verify is 401 — never a silent fall-back to a plain approval.
 */
export class PamApproversService {
  constructor(
    private readonly db: Db,
    private readonly rp: RelyingParty,
  ) {}

  private userOf(ctx: RequestContext): { id: string; email: string } {
    const { userId, email } = ctx.caller;
    if (!userId) throw unauthorized();
    return { id: userId, email: email ?? userId };
  }

  listDevices(ctx: RequestContext): ApproverDeviceRow[] {
    const user = this.userOf(ctx);
    return devicesOfUser(this.db).all({ userId: user.id });
  }

  private storeChallenge(
    purpose: 'registration' | 'assertion',
    userId: string,
    challenge: string,
    elevationRequestId: string | null,
  ): void {
    const now = Date.now();
    this.db.$client.transaction(() => {
      approverQueries(this.db).dropExpiredChallenges.run({ now: new Date(now).toISOString() });
      insertRow(this.db, pamWebauthnChallenges, {
        purpose,
        userId,
        elevationRequestId,
        challenge,
        // One clock reading for both ends, so the stored lifetime is exactly the TTL.
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + CHALLENGE_TTL_MS).toISOString(),
      });
    })();
  }

  /** Takes (deletes) the caller's live challenge of this purpose and request; null when there is none. */
  private consumeChallenge(
    purpose: 'registration' | 'assertion',
    userId: string,
    challenge: string | null,
    elevationRequestId: string | null,
  ): string | null {
    if (challenge === null) return null;
    const row = transaction(this.db, () => approverQueries(this.db).takeChallenge.get({ challenge, purpose, userId }));
    if (!row || row.expiresAt <= new Date().toISOString()) return null;
    if (row.elevationRequestId !== elevationRequestId) return null;
    return row.challenge;
  }

  // ---- registration ----

  async registrationOptions(ctx: RequestContext): Promise<Record<string, unknown>> {
    const user = this.userOf(ctx);
    const existing = this.listDevices(ctx);
    const options = await (await webauthn()).generateRegistrationOptions({
      rpName: 'svc',
      rpID: this.rp.rpId,
      userName: user.email,
      userID: new TextEncoder().encode(user.id),
      attestationType: 'none',
      timeout: CHALLENGE_TTL_MS,
      excludeCredentials: existing.map((d) => ({ id: d.credentialId, transports: d.transports })),
      authenticatorSelection: {
        authenticatorAttachment: 'platform',
        residentKey: 'preferred',
        userVerification: 'required',
      },
    });
    this.storeChallenge('registration', user.id, options.challenge, null);
    return { ...options };
  }

  async register(ctx: RequestContext, body: z.infer<typeof ApproverDeviceRegisterSchema>): Promise<ApproverDeviceRow> {
    const user = this.userOf(ctx);
    const invalid = () => badRequest('Invalid registration response', 'INVALID_ATTESTATION');
    const expected = this.consumeChallenge(
      'registration',
      user.id,
      challengeOf(body.response.response.clientDataJSON),
      null,
    );
    if (!expected) throw invalid();
    const response: RegistrationResponseJSON = {
      id: body.response.id,
      rawId: body.response.rawId,
      type: 'public-key',
      response: {
        clientDataJSON: body.response.response.clientDataJSON,
        attestationObject: body.response.response.attestationObject,
        ...(body.response.response.transports ? { transports: body.response.response.transports } : {}),
      },
      clientExtensionResults: {},
      ...(body.response.authenticatorAttachment
        ? { authenticatorAttachment: body.response.authenticatorAttachment }
        : {}),
    };
    let verified;
    try {
      verified = await (await webauthn()).verifyRegistrationResponse({
        response,
        expectedChallenge: expected,
        expectedOrigin: this.rp.origins,
        expectedRPID: this.rp.rpId,
        requireUserVerification: true,
      });
    } catch {
      throw invalid();
    }
    if (!verified.verified) throw invalid();
    const credential = verified.registrationInfo.credential;
    return this.db.$client.transaction(() => {
      const clash = approverQueries(this.db).credential.get({ credentialId: credential.id });
      if (clash) throw conflict('This authenticator is already registered', 'APPROVER_DEVICE_EXISTS');
      const device = insertRow(this.db, pamApproverDevices, {
        userId: user.id,
        name: body.name,
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: body.response.response.transports ?? [],
      });
      recordAudit(this.db, ctx, {
        action: 'pam.approver_device.register',
        resourceType: 'pam_approver_device',
        resourceId: device.id,
        resourceName: device.name,
        orgId: ctx.caller.orgId,
        details: { credentialId: device.credentialId },
      });
      return device;
    })();
  }

  deleteDevice(ctx: RequestContext, id: string): void {
    const user = this.userOf(ctx);
    this.db.$client.transaction(() => {
      const device = approverQueries(this.db).deleteOfUser.get({ id, userId: user.id });
      if (!device) throw notFound('Approver device not found');
      recordAudit(this.db, ctx, {
        action: 'pam.approver_device.delete',
        resourceType: 'pam_approver_device',
        resourceId: device.id,
        resourceName: device.name,
        orgId: ctx.caller.orgId,
      });
    })();
  }

  // ---- assertion ----

  /** The options for approving one request with a platform approver device; without any registered device
   * of the caller allowCredentials is absent (the client falls back to a plain session tap). */
  async assertionOptions(ctx: RequestContext, elevationRequestId: string): Promise<Record<string, unknown>> {
    const user = this.userOf(ctx);
    const devices = this.listDevices(ctx);
    const options = await (await webauthn()).generateAuthenticationOptions({
      rpID: this.rp.rpId,
      timeout: CHALLENGE_TTL_MS,
      userVerification: 'required',
      ...(devices.length > 0
        ? { allowCredentials: devices.map((d) => ({ id: d.credentialId, transports: d.transports })) }
        : {}),
    });
    this.storeChallenge('assertion', user.id, options.challenge, elevationRequestId);
    const result: Record<string, unknown> = { ...options };
    if (devices.length === 0) delete result.allowCredentials;
    return result;
  }

  /** Verifies a proof against the caller's live challenge for this request and one of the caller's
   * registered devices; any failure is 401. The challenge is used up either way. */
  async verifyAssertion(
    ctx: RequestContext,
    elevationRequestId: string,
    proof: z.infer<typeof WebAuthnAssertionSchema>,
  ): Promise<void> {
    const user = this.userOf(ctx);
    const fail = () => unauthorized(INVALID_PROOF, 'INVALID_PROOF');
    const expected = this.consumeChallenge(
      'assertion',
      user.id,
      challengeOf(proof.response.clientDataJSON),
      elevationRequestId,
    );
    if (!expected) throw fail();
    const device = approverQueries(this.db).credentialOfUser.get({ credentialId: proof.id, userId: user.id });
    if (!device) throw fail();
    const response: AuthenticationResponseJSON = {
      id: proof.id,
      rawId: proof.rawId,
      type: 'public-key',
      response: {
        clientDataJSON: proof.response.clientDataJSON,
        authenticatorData: proof.response.authenticatorData,
        signature: proof.response.signature,
        ...(proof.response.userHandle !== undefined ? { userHandle: proof.response.userHandle } : {}),
      },
      clientExtensionResults: {},
      ...(proof.authenticatorAttachment ? { authenticatorAttachment: proof.authenticatorAttachment } : {}),
    };
    let newCounter: number;
    try {
      const verified = await (await webauthn()).verifyAuthenticationResponse({
        response,
        expectedChallenge: expected,
        expectedOrigin: this.rp.origins,
        expectedRPID: this.rp.rpId,
        credential: {
          id: device.credentialId,
          publicKey: new Uint8Array(Buffer.from(device.publicKey, 'base64url')),
          counter: device.counter,
          transports: device.transports,
        },
        requireUserVerification: true,
      });
      if (!verified.verified) throw fail();
      newCounter = verified.authenticationInfo.newCounter;
    } catch {
      throw fail();
    }
    transaction(this.db, () => updateRow(this.db, pamApproverDevices, device.id, { counter: newCounter, lastUsedAt: new Date().toISOString() }));
  }
}
