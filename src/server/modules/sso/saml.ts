import { X509Certificate, randomBytes } from 'node:crypto';
import type * as NodeSaml from '@node-saml/node-saml';
import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';

/**
 * SAML 2.0 service provider (01 §4.7 ACS, §5.11) on @node-saml/node-saml: the AuthnRequest (HTTP-Redirect
 * binding), the metadata, and the checks of a response posted to the ACS. The library checks the XML signature
 * of the assertion against the provider's certificate (and loads the assertion only from the signed bytes),
 * the audience, the time conditions and InResponseTo; this module adds the issuer, the recipient, the presence
 * of a time limit and the attribute mapping of §5.11. Nothing here reaches the network.
 */

/** Clock skew accepted on NotBefore / NotOnOrAfter (docs/api-notes.md "Single sign-on"). */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** 01 §5.11: the NameID format the service provider asks for. */
export const NAMEID_FORMAT_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const NAMEID_FORMAT_UNSPECIFIED = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';

/** @node-saml/node-saml and its XML stack (some 3 MB of heap) load at the first SAML request, not at every start. */
let nodeSaml: Promise<typeof NodeSaml> | undefined;
const loadNodeSaml = () => (nodeSaml ??= import('@node-saml/node-saml'));

/** This server as a SAML service provider: one entity for every organization (the ACS is one URL). */
export interface ServiceProvider {
  entityId: string;
  acsUrl: string;
}

export function serviceProvider(baseUrl: string): ServiceProvider {
  return { entityId: `${baseUrl}/api/v1/sso/saml/metadata`, acsUrl: `${baseUrl}/api/v1/sso/saml/acs` };
}

/** What a SAML provider row must carry before it can serve a sign-in. */
export interface IdentityProvider {
  ssoUrl: string;
  entityId: string;
  certificate: string;
}

/** The sign-in in progress a response must answer: the AuthnRequest id and when it was sent. */
export interface PendingRequest {
  requestId: string;
  issuedAt: string;
  ttlMs: number;
}

const CLAIMS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
/**
 * 01 §5.11: attribute names that mean the same field — the standard claim URIs, the OID forms (mail, given
 * name, surname, display name; eduPerson groups) and the common short names. Whichever of them the provider's
 * attributeMapping names, a value sent under another one of its group is found.
 */
const ATTRIBUTE_ALIASES: readonly (readonly string[])[] = [
  [`${CLAIMS}/emailaddress`, 'urn:oid:0.9.2342.19200300.100.1.3', 'email', 'mail', 'http://schemas.xmlsoap.org/claims/EmailAddress'],
  [`${CLAIMS}/givenname`, 'urn:oid:2.5.4.42', 'givenName', 'firstName'],
  [`${CLAIMS}/surname`, 'urn:oid:2.5.4.4', 'sn', 'surname', 'lastName'],
  [`${CLAIMS}/name`, 'urn:oid:2.16.840.1.113730.3.1.241', 'http://schemas.microsoft.com/identity/claims/displayname', 'displayName', 'name'],
  ['http://schemas.microsoft.com/ws/2008/06/identity/claims/groups', 'http://schemas.xmlsoap.org/claims/Group', 'urn:oid:1.3.6.1.4.1.5923.1.5.1.1', 'groups', 'memberOf'],
];

/** A certificate as PEM (from PEM or the bare base64 of its DER); throws when it is not an X.509 certificate. */
export function normalizeCertificate(input: string): string {
  const body = input.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw new Error('not a PEM or base64 certificate');
  const pem = `-----BEGIN CERTIFICATE-----\n${(body.match(/.{1,64}/g) ?? []).join('\n')}\n-----END CERTIFICATE-----\n`;
  new X509Certificate(pem);
  return pem;
}

async function client(idp: IdentityProvider, sp: ServiceProvider, pending: PendingRequest | null, requestId = ''): Promise<SAML> {
  const { SAML, ValidateInResponseTo } = await loadNodeSaml();
  // InResponseTo is checked against the one request the relay state names (stored with the sign-in state and
  // taken once by the caller); nothing is kept in memory, so it works across restarts and processes.
  const requests: CacheProvider = {
    saveAsync: (_key, value) => Promise.resolve({ value, createdAt: Date.now() }),
    getAsync: (key) => Promise.resolve(pending !== null && key === pending.requestId ? pending.issuedAt : null),
    removeAsync: (key) => Promise.resolve(key),
  };
  return new SAML({
    entryPoint: idp.ssoUrl,
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    audience: sp.entityId,
    idpCert: idp.certificate,
    idpIssuer: idp.entityId,
    identifierFormat: NAMEID_FORMAT_EMAIL,
    wantAssertionsSigned: true,
    // Most identity providers sign the assertion only; the assertion is what is required to be signed (§5.11).
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: pending?.ttlMs ?? 1,
    cacheProvider: requests,
    // Ask for no particular authentication method: the provider's own policy (MFA included) decides.
    disableRequestedAuthnContext: true,
    generateUniqueId: () => requestId,
  });
}

/** A fresh AuthnRequest id and the IdP URL carrying it (deflated, HTTP-Redirect) with the relay state. */
export async function authnRequest(idp: IdentityProvider, sp: ServiceProvider, relayState: string): Promise<{ url: string; requestId: string }> {
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const url = await (await client(idp, sp, null, requestId)).getAuthorizeUrlAsync(relayState, undefined, {});
  return { url, requestId };
}

/** 01 §5.11 service-provider metadata: entity id, ACS (HTTP-POST), e-mail NameID, WantAssertionsSigned. */
export async function metadata(sp: ServiceProvider): Promise<string> {
  const { generateServiceProviderMetadata } = await loadNodeSaml();
  return generateServiceProviderMetadata({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    identifierFormat: NAMEID_FORMAT_EMAIL,
    wantAssertionsSigned: true,
  });
}

export interface VerifiedAssertion {
  /** NameID: the subject of the identity link. */
  subject: string;
  /** Attributes by name, with the aliases of §5.11 filled in (and the e-mail NameID under `emailClaim`). */
  claims: Record<string, unknown>;
  assertionId: string;
  /** The latest NotOnOrAfter of the assertion: until then it must not be accepted again. */
  notOnOrAfter: string;
}

export class SamlRejection extends Error {}

type XmlNode = { $?: Record<string, string> } & Record<string, unknown>;

function children(node: XmlNode | undefined, name: string): XmlNode[] {
  const value = node?.[name];
  return Array.isArray(value) ? (value as XmlNode[]) : [];
}

/**
 * Checks a posted SAMLResponse and answers its assertion. Refused (SamlRejection): no valid signature by the
 * provider's certificate on the assertion, more than one assertion, a wrong issuer or audience, outside its time
 * conditions (± SAML_CLOCK_SKEW_MS), InResponseTo missing or not the pending request, a recipient other than
 * this ACS, no time limit at all, no NameID.
 */
export async function verifyResponse(
  idp: IdentityProvider,
  sp: ServiceProvider,
  samlResponse: string,
  pending: PendingRequest,
  emailClaim: string,
): Promise<VerifiedAssertion> {
  let profile: Profile | null;
  try {
    ({ profile } = await (await client(idp, sp, pending)).validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (err) {
    throw new SamlRejection(err instanceof Error ? err.message : String(err));
  }
  if (!profile) throw new SamlRejection('the response carries no assertion');
  // node-saml checks the issuer of logout messages only; the assertion's (signed) Issuer is checked here.
  if (profile.issuer !== idp.entityId) throw new SamlRejection(`unexpected issuer ${JSON.stringify(profile.issuer ?? null)}`);
  const assertion = (profile.getAssertion?.() as { Assertion?: XmlNode } | undefined)?.Assertion;
  const assertionId = assertion?.$?.ID;
  if (!assertion || !assertionId) throw new SamlRejection('the assertion has no ID');
  const confirmations = children(children(assertion, 'Subject')[0], 'SubjectConfirmation').flatMap((c) => children(c, 'SubjectConfirmationData'));
  const recipients = confirmations.map((d) => d.$?.Recipient).filter((r): r is string => typeof r === 'string');
  if (recipients.length > 0 && !recipients.includes(sp.acsUrl)) throw new SamlRejection('the assertion is for another recipient');
  const limits = [...confirmations, ...children(assertion, 'Conditions')]
    .map((n) => n.$?.NotOnOrAfter)
    .filter((v): v is string => typeof v === 'string')
    .map((v) => Date.parse(v))
    .filter((ms) => Number.isFinite(ms));
  // Without any NotOnOrAfter an assertion would be good forever (SAML profiles §4.1.4.2 requires one).
  if (limits.length === 0) throw new SamlRejection('the assertion has no NotOnOrAfter');
  if (!profile.nameID) throw new SamlRejection('the assertion has no NameID');

  const attributes = typeof profile.attributes === 'object' && profile.attributes !== null ? (profile.attributes as Record<string, unknown>) : {};
  const claims: Record<string, unknown> = { ...attributes };
  for (const group of ATTRIBUTE_ALIASES) {
    const present = group.find((name) => claims[name] !== undefined);
    if (present === undefined) continue;
    for (const name of group) claims[name] ??= claims[present];
  }
  const format = profile.nameIDFormat ?? NAMEID_FORMAT_UNSPECIFIED;
  if (claims[emailClaim] === undefined && (format === NAMEID_FORMAT_EMAIL || (format === NAMEID_FORMAT_UNSPECIFIED && profile.nameID.includes('@')))) {
    claims[emailClaim] = profile.nameID;
  }
  return {
    subject: profile.nameID,
    claims,
    assertionId,
    notOnOrAfter: new Date(Math.max(...limits) + SAML_CLOCK_SKEW_MS).toISOString(),
  };
}
