import { sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { id, json, ref, timestamps } from './columns.js';
import { users } from './identity.js';
import { organizations } from './tenancy.js';

/** The kinds of `/integrations` settings (02 §4.4): the three chat providers by wire value, monitoring, ticketing
 * and the legacy `/integrations/psa` settings. */
export const INTEGRATION_KINDS = ['slack', 'teams', 'discord', 'monitoring', 'ticketing', 'psa'] as const;
export type IntegrationKind = (typeof INTEGRATION_KINDS)[number];

/**
 * 02 §4.4 integration settings, one row per organization and kind, kept in the database (the deployed service
 * holds them in process memory only; docs/api-notes.md "Integrations"). `config` is the configuration as the API
 * shows it, every secret value (webhook URLs, tokens, passwords, API keys) already masked; `configEnc` is the
 * SecretBox ciphertext of the whole configuration, the only place the secrets are kept.
 */
export const integrationSettings = sqliteTable(
  'integration_settings',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    kind: text({ enum: INTEGRATION_KINDS }).notNull(),
    config: json<Record<string, unknown>>().notNull(),
    configEnc: text().notNull(),
    /** The last `test` (for chat providers it runs in the background): when, whether it worked, and why not. */
    lastTestedAt: text(),
    lastTestStatus: text({ enum: ['queued', 'succeeded', 'failed'] }),
    lastTestError: text(),
    updatedBy: text().references(() => users.id, { onDelete: 'set null' }),
    ...timestamps(),
  },
  (t) => [uniqueIndex('integration_settings_org_kind_idx').on(t.orgId, t.kind)],
);
