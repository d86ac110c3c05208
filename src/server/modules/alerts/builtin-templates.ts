import { sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { alertTemplates } from '../../db/schema/index.js';
import type { AlertSeverity } from '../../db/schema/alerts.js';

export interface BuiltinTemplate {
  id: string;
  name: string;
  category: string;
  severity: AlertSeverity;
  conditions: Record<string, unknown>;
  defaultCooldownMinutes: number;
  description: string;
}

/** 02 §2.1 "Built-in templates": read-only, available to every organization, with fixed ids. */
export const BUILTIN_TEMPLATES: readonly BuiltinTemplate[] = [
  {
    id: '00000000-0000-4000-a000-000000000001',
    name: 'CPU High',
    category: 'Performance',
    severity: 'high',
    conditions: { metric: 'cpu.usage', operator: '>', threshold: 90, durationMinutes: 5 },
    defaultCooldownMinutes: 15,
    description: 'CPU usage above 90% for 5 minutes',
  },
  {
    id: '00000000-0000-4000-a000-000000000002',
    name: 'Disk Space Low',
    category: 'Capacity',
    severity: 'high',
    conditions: { metric: 'disk.freePercent', operator: '<', threshold: 10, durationMinutes: 10 },
    defaultCooldownMinutes: 30,
    description: 'Free disk space below 10% for 10 minutes',
  },
  {
    id: '00000000-0000-4000-a000-000000000003',
    name: 'Service Stopped',
    category: 'Availability',
    severity: 'critical',
    conditions: { metric: 'service.status', operator: 'equals', threshold: 'stopped', durationMinutes: 1 },
    defaultCooldownMinutes: 5,
    description: 'A service stopped for 1 minute (set serviceName in the rule conditions)',
  },
  {
    id: '00000000-0000-4000-a000-000000000004',
    name: 'Memory Pressure',
    category: 'Performance',
    severity: 'medium',
    conditions: { metric: 'memory.availablePercent', operator: '<', threshold: 15, durationMinutes: 5 },
    defaultCooldownMinutes: 15,
    description: 'Available memory below 15% for 5 minutes',
  },
  {
    id: '00000000-0000-4000-a000-000000000005',
    name: 'Network Latency High',
    category: 'Network',
    severity: 'medium',
    conditions: { metric: 'network.latencyMs', operator: '>', threshold: 200, durationMinutes: 3 },
    defaultCooldownMinutes: 10,
    description: 'Network latency above 200 ms for 3 minutes',
  },
];

export const titleTemplateFor = (name: string) => `{{deviceName}}: ${name}`;
export const messageTemplateFor = (name: string) => `Alert triggered: ${name} on {{deviceName}} ({{hostname}}).`;

/** Writes the built-in templates as the table says, at every start (like the built-in roles). */
export function ensureBuiltinAlertTemplates(db: Db): void {
  db.$client.transaction(() => {
    for (const t of BUILTIN_TEMPLATES) {
      const values = {
        name: t.name,
        description: t.description,
        category: t.category,
        severity: t.severity,
        conditions: t.conditions,
        targets: { scope: 'organization' },
        defaultCooldownMinutes: t.defaultCooldownMinutes,
        titleTemplate: titleTemplateFor(t.name),
        messageTemplate: messageTemplateFor(t.name),
        builtIn: true,
        orgId: null,
      };
      db.insert(alertTemplates)
        .values({ id: t.id, ...values })
        .onConflictDoUpdate({ target: alertTemplates.id, set: { ...values, updatedAt: sql`${alertTemplates.updatedAt}` } })
        .run();
    }
  })();
}
