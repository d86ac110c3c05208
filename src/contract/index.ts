import { accessReviews } from './access-reviews.js';
import { agents } from './agents.js';
import { alertTemplates, alerts } from './alerts.js';
import { alertRulesLegacy } from './alert-rules-legacy.js';
import { alertChannels, alertPolicies } from './alert-channels.js';
import { apiKeys } from './api-keys.js';
import { audit } from './audit.js';
import { auth } from './auth.js';
import { devices } from './devices.js';
import { enrollmentKeys } from './enrollment-keys.js';
import { health } from './health.js';
import { notifications } from './notifications.js';
import { pam } from './pam.js';
import { roles } from './roles.js';
import { sso } from './sso.js';
import { tenancy } from './tenancy.js';
import { account, users } from './users.js';
import { webhooks } from './webhooks.js';
import { psa } from './psa.js';
import { filters } from './filters.js';
import { deviceGroups, groups, tags } from './groups.js';
import { search } from './search.js';
import { integrations } from './integrations.js';
import { deviceCommands } from './device-commands.js';
import { agentCommands } from './agent-commands.js';
import { scripts } from './scripts.js';
import { mobile } from './mobile.js';
import { deviceLogs } from './device-logs.js';
import { software } from './software.js';

export * from './endpoint.js';
export * from './common.js';

/** Every endpoint of the API, by area. The server binds each one; the client derives a call for each. */
export const contract = {
  health,
  auth,
  account,
  tenancy,
  users,
  roles,
  accessReviews,
  audit,
  apiKeys,
  enrollmentKeys,
  agents,
  devices,
  pam,
  webhooks,
  alertTemplates,
  alerts,
  alertRulesLegacy,
  notifications,
  alertChannels,
  alertPolicies,
  sso,
  psa,
  filters,
  groups,
  deviceGroups,
  tags,
  search,
  integrations,
  deviceCommands,
  agentCommands,
  scripts,
  mobile,
  deviceLogs,
  software,
} as const;
export type Contract = typeof contract;
