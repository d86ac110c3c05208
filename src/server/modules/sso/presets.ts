import type { z } from 'zod';
import type { SsoPresetSchema } from '../../../contract/sso.js';

type Preset = z.infer<typeof SsoPresetSchema>;

/** 01 §2.9 defaults when no preset is named. */
export const DEFAULT_SCOPES = 'openid profile email';
export const DEFAULT_MAPPING = { email: 'email', name: 'name' } as const;

const OIDC_MAPPING = { email: 'email', name: 'name', firstName: 'given_name', lastName: 'family_name' };

/** 01 §5.11: the standard claim URIs of SAML attributes. */
const CLAIMS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
const SAML_MAPPING = {
  email: `${CLAIMS}/emailaddress`,
  name: `${CLAIMS}/name`,
  firstName: `${CLAIMS}/givenname`,
  lastName: `${CLAIMS}/surname`,
  groups: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups',
};

/** The nine presets of 01 §2.9: four OpenID Connect (a cloud directory, an identity platform that adds the
 * `groups` scope, a workspace suite, an identity service) and five SAML (sign-in URL templates). */
export const SSO_PRESETS: readonly Preset[] = [
  {
    id: 'azure-ad',
    name: 'Microsoft Entra ID (Azure AD)',
    type: 'oidc',
    issuerTemplate: 'https://login.microsoftonline.com/{tenantId}/v2.0',
    scopes: DEFAULT_SCOPES,
    attributeMapping: OIDC_MAPPING,
  },
  {
    id: 'okta',
    name: 'Okta',
    type: 'oidc',
    issuerTemplate: 'https://{domain}.okta.com',
    scopes: `${DEFAULT_SCOPES} groups`,
    attributeMapping: { ...OIDC_MAPPING, groups: 'groups' },
  },
  {
    id: 'google',
    name: 'Google Workspace',
    type: 'oidc',
    issuerTemplate: 'https://accounts.google.com',
    scopes: DEFAULT_SCOPES,
    attributeMapping: OIDC_MAPPING,
  },
  {
    id: 'auth0',
    name: 'Auth0',
    type: 'oidc',
    issuerTemplate: 'https://{domain}.auth0.com/',
    scopes: DEFAULT_SCOPES,
    attributeMapping: OIDC_MAPPING,
  },
  {
    id: 'azure-ad-saml',
    name: 'Microsoft Entra ID (SAML)',
    type: 'saml',
    ssoUrlTemplate: 'https://login.microsoftonline.com/{tenantId}/saml2',
    entityIdTemplate: 'https://sts.windows.net/{tenantId}/',
    attributeMapping: SAML_MAPPING,
  },
  {
    id: 'okta-saml',
    name: 'Okta (SAML)',
    type: 'saml',
    ssoUrlTemplate: 'https://{domain}.okta.com/app/{appName}/{appId}/sso/saml',
    entityIdTemplate: 'http://www.okta.com/{appId}',
    attributeMapping: SAML_MAPPING,
  },
  {
    id: 'google-saml',
    name: 'Google Workspace (SAML)',
    type: 'saml',
    ssoUrlTemplate: 'https://accounts.google.com/o/saml2/idp?idpid={idpId}',
    entityIdTemplate: 'https://accounts.google.com/o/saml2?idpid={idpId}',
    attributeMapping: SAML_MAPPING,
  },
  {
    id: 'onelogin-saml',
    name: 'OneLogin (SAML)',
    type: 'saml',
    ssoUrlTemplate: 'https://{subdomain}.onelogin.com/trust/saml2/http-redirect/sso/{appId}',
    entityIdTemplate: 'https://app.onelogin.com/saml/metadata/{appId}',
    attributeMapping: SAML_MAPPING,
  },
  {
    id: 'adfs-saml',
    name: 'Active Directory Federation Services (SAML)',
    type: 'saml',
    ssoUrlTemplate: 'https://{host}/adfs/ls/',
    entityIdTemplate: 'http://{host}/adfs/services/trust',
    attributeMapping: SAML_MAPPING,
  },
];

export function findPreset(id: string): Preset | undefined {
  return SSO_PRESETS.find((p) => p.id === id);
}
