import { API_KEY_PREFIX } from '../../../contract/api-keys.js';
import { secureRandomBytes, sha256Hex } from '../../security/crypto.js';

/** Characters of the key kept in plaintext: the prefix plus 8 (01 §2.1). */
export const KEY_PREFIX_LENGTH = 12;

export interface ApiKeyMaterial {
  key: string;
  keyPrefix: string;
  keyHash: string;
}

/** A new key: `svc_` + 32 base64url characters (24 bytes from the CSPRNG encode to exactly 32 characters,
 * 192 bits of entropy); only the prefix and the SHA-256 hex are kept. */
export function newApiKeyMaterial(): ApiKeyMaterial {
  const key = `${API_KEY_PREFIX}${secureRandomBytes(24).toString('base64url')}`;
  return { key, keyPrefix: key.slice(0, KEY_PREFIX_LENGTH), keyHash: sha256Hex(key) };
}
