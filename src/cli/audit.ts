/** What the audit commands share. */
export const AUDIT_COLUMNS = ['id', 'timestamp', 'actorEmail', 'action', 'resourceType', 'resourceName', 'result'];

export const auditFilterDescriptions: Record<string, string> = {
  user: 'Actor: part of the e-mail (case-insensitive) or the exact id.',
  action: 'Part of the action, e.g. auth.login (case-insensitive).',
  resource: 'Part of the resource type or name (case-insensitive), or the exact resource id.',
  orgId: 'Only the entries of this organization.',
  from: 'Entries at or after this ISO 8601 time, e.g. 2026-01-01T00:00:00Z.',
  to: 'Entries at or before this ISO 8601 time (inclusive).',
};
