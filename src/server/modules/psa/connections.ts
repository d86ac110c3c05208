import type { PsaConnection, PsaTicket } from '../../../contract/psa.js';
import { type psaConnections, type psaTicketMappings } from '../../db/schema/index.js';
import type { OutboundClient } from '../../delivery/outbound.js';
import { DomainError } from '../../errors.js';
import type { SecretBox } from '../../security/crypto.js';
import { createAdapter, type PsaAdapter } from './adapters.js';

export type ConnectionRow = typeof psaConnections.$inferSelect;
export type MappingRow = typeof psaTicketMappings.$inferSelect;

/** 02 §2.8: the connection as the API shows it: hasCredentials, never the credentials. */
export function presentConnection(row: ConnectionRow): PsaConnection {
  return {
    id: row.id,
    orgId: row.orgId,
    provider: row.provider,
    name: row.name,
    status: row.status,
    enabled: row.enabled,
    settings: row.settings,
    hasCredentials: row.credentialsEnc !== null,
    lastTestedAt: row.syncSettings.lastTestedAt,
    testStatus: row.syncSettings.testStatus,
    lastSyncedAt: row.lastSyncAt,
    lastSyncStatus: row.lastSyncStatus,
    lastSyncError: row.lastSyncError,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** 02 §4.4 ticket rows: {id, psaId, title, status, syncedAt, raw}. */
export function presentTicket(row: MappingRow): PsaTicket {
  return {
    id: row.id,
    psaId: row.connectionId,
    title: row.title,
    status: row.status,
    syncedAt: row.lastSyncAt,
    raw: { externalTicketId: row.externalTicketId, externalTicketUrl: row.externalTicketUrl, alertId: row.alertId, deviceId: row.deviceId },
  };
}

export const noCredentials = () => new DomainError('invalid', 'PSA connection has no usable credentials', 'PSA_NO_CREDENTIALS');

/**
 * Sealing and opening credentials, and the adapter of a stored connection. Without a server key nothing is
 * sealed: 02 §7 `Failed to encrypt credentials`.
 */
export class CredentialVault {
  constructor(
    private readonly box: SecretBox | null,
    private readonly outbound: OutboundClient,
  ) {}

  /** The ciphertext of a credentials object; null for none (absent or empty). */
  seal(credentials: Record<string, unknown> | undefined): string | null {
    if (!credentials || Object.keys(credentials).length === 0) return null;
    if (!this.box) throw new DomainError('unavailable', 'Failed to encrypt credentials', 'PSA_ENCRYPTION_UNAVAILABLE');
    try {
      return this.box.seal(JSON.stringify(credentials));
    } catch {
      throw new DomainError('unavailable', 'Failed to encrypt credentials', 'PSA_ENCRYPTION_UNAVAILABLE');
    }
  }

  open(row: ConnectionRow): Record<string, unknown> {
    if (row.credentialsEnc === null || !this.box) throw noCredentials();
    const parsed: unknown = JSON.parse(this.box.open(row.credentialsEnc));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw noCredentials();
    return parsed as Record<string, unknown>;
  }

  /** The provider adapter over the stored credentials (PsaCredentialsError when a required field is missing). */
  adapterOf(row: ConnectionRow): PsaAdapter {
    return createAdapter(row.provider, this.open(row), row.settings, this.outbound);
  }
}
