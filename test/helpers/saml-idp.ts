import { randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { generate } from 'selfsigned';
import { SignedXml } from 'xml-crypto';

/**
 * A SAML identity provider inside the test: its own key pair and self-signed certificate, and responses built
 * and signed here (xml-crypto, RSA-SHA256, exclusive canonicalization, enveloped signature on the assertion,
 * as real identity providers sign). Nothing reaches the network.
 */

export interface SamlKey {
  privateKey: string;
  cert: string;
}

export async function samlKey(commonName = 'Test IdP'): Promise<SamlKey> {
  const pems = await generate([{ name: 'commonName', value: commonName }], { keySize: 2048, algorithm: 'sha256' });
  return { privateKey: pems.private, cert: pems.cert };
}

export const NAMEID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export interface AssertionFields {
  issuer: string;
  audience: string;
  recipient: string;
  /** InResponseTo on the Response and the SubjectConfirmationData (null: omitted from both). */
  inResponseTo: string | null;
  /** InResponseTo of the SubjectConfirmationData only, when it differs (null: omitted there). */
  subjectInResponseTo?: string | null;
  nameId: string;
  nameIdFormat?: string;
  notBefore?: Date;
  notOnOrAfter?: Date;
  attributes?: Record<string, string | string[]>;
  assertionId?: string;
  responseId?: string;
}

const id = () => `_${randomBytes(16).toString('hex')}`;
const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** An unsigned <saml:Assertion> with the fields given (valid from a minute ago for five minutes by default). */
export function assertionXml(f: AssertionFields): string {
  const now = Date.now();
  const notBefore = f.notBefore ?? new Date(now - 60_000);
  const notOnOrAfter = f.notOnOrAfter ?? new Date(now + 5 * 60_000);
  const subjectIrt = f.subjectInResponseTo !== undefined ? f.subjectInResponseTo : f.inResponseTo;
  const attrs = Object.entries(f.attributes ?? {})
    .map(([name, value]) => {
      const values = (Array.isArray(value) ? value : [value]).map((v) => `<saml:AttributeValue>${esc(v)}</saml:AttributeValue>`).join('');
      return `<saml:Attribute Name="${esc(name)}">${values}</saml:Attribute>`;
    })
    .join('');
  return (
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${f.assertionId ?? id()}" Version="2.0" IssueInstant="${iso(new Date(now))}">` +
    `<saml:Issuer>${esc(f.issuer)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${f.nameIdFormat ?? NAMEID_EMAIL}">${esc(f.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData ` +
    `${subjectIrt ? `InResponseTo="${esc(subjectIrt)}" ` : ''}NotOnOrAfter="${iso(notOnOrAfter)}" Recipient="${esc(f.recipient)}"/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(notBefore)}" NotOnOrAfter="${iso(notOnOrAfter)}">` +
    `<saml:AudienceRestriction><saml:Audience>${esc(f.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(new Date(now))}" SessionIndex="${id()}"><saml:AuthnContext>` +
    `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement>` +
    (attrs ? `<saml:AttributeStatement>${attrs}</saml:AttributeStatement>` : '') +
    `</saml:Assertion>`
  );
}

/** A <samlp:Response> (success status) around the given assertion XML (or several, for wrapping attacks). */
export function responseXml(f: Pick<AssertionFields, 'issuer' | 'recipient' | 'inResponseTo' | 'responseId'>, ...assertions: string[]): string {
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
    `ID="${f.responseId ?? id()}" Version="2.0" IssueInstant="${iso(new Date())}" Destination="${esc(f.recipient)}"` +
    `${f.inResponseTo ? ` InResponseTo="${esc(f.inResponseTo)}"` : ''}>` +
    `<saml:Issuer>${esc(f.issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    assertions.join('') +
    `</samlp:Response>`
  );
}

/** Signs the assertion whose ID is given, inside the document (enveloped signature after its Issuer). */
export function signAssertion(xml: string, assertionId: string, key: SamlKey): string {
  const sig = new SignedXml({
    privateKey: key.privateKey,
    publicCert: key.cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  const assertion = `//*[local-name(.)='Assertion' and @ID='${assertionId}']`;
  sig.addReference({
    xpath: assertion,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  sig.computeSignature(xml, { location: { reference: `${assertion}/*[local-name(.)='Issuer']`, action: 'after' } });
  return sig.getSignedXml();
}

/** A whole response: one assertion with the fields given, signed with `key` (null: unsigned), as base64. */
export function samlResponse(f: AssertionFields, key: SamlKey | null): string {
  const assertionId = f.assertionId ?? id();
  const xml = responseXml(f, assertionXml({ ...f, assertionId }));
  return toBase64(key ? signAssertion(xml, assertionId, key) : xml);
}

export function toBase64(xml: string): string {
  return Buffer.from(xml, 'utf8').toString('base64');
}

export function fromBase64(b64: string): string {
  return Buffer.from(b64, 'base64').toString('utf8');
}

/** What an IdP reads from the HTTP-Redirect binding: the AuthnRequest (inflated) and the relay state. */
export function readAuthnRequest(location: string): { url: URL; xml: string; id: string; relayState: string } {
  const url = new URL(location);
  const xml = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
  const requestId = /\sID="([^"]+)"/.exec(xml)?.[1] ?? '';
  return { url, xml, id: requestId, relayState: url.searchParams.get('RelayState') ?? '' };
}

/** The ACS form post body, as the user's browser sends it. */
export function acsForm(samlResponseB64: string, relayState: string): string {
  return new URLSearchParams({ SAMLResponse: samlResponseB64, RelayState: relayState }).toString();
}
