import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { afterEach, beforeEach, expect } from 'vitest';
import { createTestApp, type TestApp } from './server.js';
import { seedWorld, type World } from './seed.js';

/** Fixtures of the PAM tests: the seed world (MFA tokens) plus enrolled devices, through the real endpoints. */

export const API = '/api/v1';
export const sha = (value: string) => createHash('sha256').update(value).digest('hex');
export const H1 = sha('app.exe');
export const H2 = sha('other.exe');
export const T1 = sha('vendor-cert');
export const T2 = sha('other-cert');

export interface EnrolledDevice {
  deviceId: string;
  agentId: string;
  token: string;
  siteId: string | null;
  orgId: string;
}

export interface PamWorld extends World {
  /** Devices of organization A1: in site A1a, in site A1b, without a site; and one of organization A2. */
  devA1a: EnrolledDevice;
  devA1b: EnrolledDevice;
  devA1none: EnrolledDevice;
  devA2: EnrolledDevice;
}

export async function enrollDevice(
  t: TestApp,
  token: string,
  orgId: string,
  siteId: string | null,
  hostname: string,
): Promise<EnrolledDevice> {
  const key = await t.call('POST', `${API}/enrollment-keys`, {
    token,
    body: { orgId, name: `key ${hostname}`, ...(siteId ? { siteId } : {}) },
  });
  expect(key.status, key.text).toBe(201);
  const res = await t.call('POST', `${API}/agents/enroll`, {
    body: {
      enrollmentKey: key.body.key,
      hostname,
      osType: 'windows',
      osVersion: '11',
      architecture: 'x86_64',
      agentVersion: '1.0.0',
    },
  });
  expect(res.status, res.text).toBe(201);
  return { deviceId: res.body.deviceId, agentId: res.body.agentId, token: res.body.authToken, siteId, orgId };
}

export async function seedPamWorld(t: TestApp): Promise<PamWorld> {
  const w = await seedWorld(t, { mfa: true });
  const sys = w.tokens.system;
  return {
    ...w,
    devA1a: await enrollDevice(t, sys, w.orgA1.id, w.siteA1a.id, 'ws-a1a'),
    devA1b: await enrollDevice(t, sys, w.orgA1.id, w.siteA1b.id, 'ws-a1b'),
    devA1none: await enrollDevice(t, sys, w.orgA1.id, null, 'ws-a1none'),
    devA2: await enrollDevice(t, sys, w.orgA2.id, w.siteA2a.id, 'ws-a2'),
  };
}

/** A UAC prompt of a signed, hashed executable, observed on a Wednesday at noon UTC. */
export const UAC: Record<string, unknown> = {
  subject_username: 'CORP\\alice',
  subject_groups: ['HelpDesk', 'Staff'],
  target_executable_path: 'C:\\Program Files\\Vendor\\app.exe',
  target_executable_hash: H1,
  target_executable_signer: 'Vendor Inc',
  target_executable_signer_thumbprint: T1,
  parent_image: 'C:\\Windows\\explorer.exe',
  command_line: '"C:\\Program Files\\Vendor\\app.exe" --install --quiet',
  observed_at: '2024-06-05T12:00:00Z',
};

/** An AI tool action of a catalogued tool. */
export const AI: Record<string, unknown> = {
  subject_username: 'CORP\\alice',
  tool_name: 'execute_command',
  risk_tier: 3,
  action_digest: sha('action-1'),
  target_executable_path: 'C:\\Windows\\System32\\cmd.exe',
  observed_at: '2024-06-05T12:00:00Z',
};

export function ingest(t: TestApp, device: EnrolledDevice, body: Record<string, unknown>) {
  return t.call('POST', `${API}/agents/${device.agentId}/elevation-requests`, { token: device.token, body });
}

/** Ingests a pending request (no rule matches by default) and returns its id. */
export async function pendingRequest(
  t: TestApp,
  device: EnrolledDevice,
  body: Record<string, unknown> = UAC,
): Promise<string> {
  const res = await ingest(t, device, body);
  expect(res.status, res.text).toBe(201);
  expect(res.body.status).toBe('pending');
  return res.body.id as string;
}

export async function createRule(t: TestApp, token: string, body: Record<string, unknown>) {
  const res = await t.call('POST', `${API}/pam/rules`, { token, body });
  expect(res.status, res.text).toBe(201);
  return res.body.rule as Record<string, any>;
}

/**
 * A software platform authenticator (ES256, attestation "none") that answers registration and assertion
 * options as a browser's navigator.credentials would, so the WebAuthn paths run end to end.
 */
export class SoftAuthenticator {
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  readonly credentialId = randomBytes(16);
  private counter = 0;

  constructor(
    private readonly rpId = 'localhost',
    private readonly origin = 'http://localhost:3000',
  ) {}

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  private cosePublicKey(): Uint8Array {
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    const x = Buffer.from(jwk.x ?? '', 'base64url');
    const y = Buffer.from(jwk.y ?? '', 'base64url');
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, x],
        [-3, y],
      ]),
    );
  }

  private clientData(type: string, challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  register(challenge: string) {
    const rpIdHash = createHash('sha256').update(this.rpId).digest();
    const counter = Buffer.alloc(4);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      rpIdHash,
      Buffer.from([0x45]),
      counter,
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      Buffer.from(this.cosePublicKey()),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(authData)],
      ]) as never,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: this.clientData('webauthn.create', challenge).toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  assert(challenge: string, options: { flags?: number; origin?: string } = {}) {
    this.counter++;
    const rpIdHash = createHash('sha256').update(this.rpId).digest();
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const authData = Buffer.concat([rpIdHash, Buffer.from([options.flags ?? 0x05]), counter]);
    const clientData = options.origin
      ? Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin: options.origin, crossOrigin: false }))
      : this.clientData('webauthn.get', challenge);
    const signature = sign(
      'sha256',
      Buffer.concat([authData, createHash('sha256').update(clientData).digest()]),
      this.keys.privateKey,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}

/** The set-up of the PAM server tests: before each test a fresh app (createTestApp with `env`) with the PAM world,
 * handed to `ready`; after it, the app is closed. */
export function usePamWorld(ready: (t: TestApp, w: PamWorld) => void, env: Record<string, string> = {}): void {
  let app: TestApp | undefined;
  beforeEach(async () => {
    app = await createTestApp(env);
    ready(app, await seedPamWorld(app));
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
}

/** A rule's criteria, all unset (as a rule row and the rule engine read them): spread and set the ones a test needs. */
export const NO_RULE_CRITERIA = {
  matchSigner: null,
  matchSignerGroupId: null,
  matchSignerThumbprint: null,
  matchHash: null,
  matchPathGlob: null,
  matchParentImage: null,
  matchCommandLine: null,
  matchUser: null,
  matchAdGroup: null,
  matchToolName: null,
  matchRiskTier: null,
  matchNegate: null,
  timeWindow: null,
};
