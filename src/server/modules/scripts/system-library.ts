import type { scripts } from '../../db/schema/index.js';

type SystemScript = Omit<typeof scripts.$inferInsert, 'orgId' | 'isSystem' | 'createdBy' | 'createdAt' | 'updatedAt'> & { id: string };

/**
 * The built-in scripts (03 §4.7 `GET /scripts/system-library`): read-only, upserted by id on every start, copied
 * into an organization with `POST /scripts/import/:id` to be changed. Ids are fixed so imports and runs keep
 * pointing at them across releases.
 */
export const SYSTEM_SCRIPTS: readonly SystemScript[] = [
  {
    id: '5c1f0a2e-7b1d-4c35-9a51-0d6e2f3a1001',
    name: 'Disk usage report',
    description: 'Lists mounted file systems with their size, use and free space.',
    category: 'Diagnostics',
    osTypes: ['linux', 'macos'],
    language: 'bash',
    content: '#!/usr/bin/env bash\nset -euo pipefail\ndf -hP\n',
    parameters: [],
    timeoutSeconds: 60,
    runAs: 'system',
    version: 1,
    exitCodeSeverityMapping: null,
  },
  {
    id: '5c1f0a2e-7b1d-4c35-9a51-0d6e2f3a1002',
    name: 'Flush DNS cache',
    description: "Clears the Windows DNS resolver cache (ipconfig /flushdns).",
    category: 'Network',
    osTypes: ['windows'],
    language: 'cmd',
    content: '@echo off\r\nipconfig /flushdns\r\n',
    parameters: [],
    timeoutSeconds: 60,
    runAs: 'system',
    version: 1,
    exitCodeSeverityMapping: null,
  },
  {
    id: '5c1f0a2e-7b1d-4c35-9a51-0d6e2f3a1003',
    name: 'Restart a Windows service',
    description: 'Restarts the named service and reports its state; exit 1 when it does not come back running.',
    category: 'Maintenance',
    osTypes: ['windows'],
    language: 'powershell',
    content:
      '$ErrorActionPreference = "Stop"\n' +
      'Restart-Service -Name "{{var.serviceName}}" -Force\n' +
      '$s = Get-Service -Name "{{var.serviceName}}"\n' +
      'Write-Output "$($s.Name): $($s.Status)"\n' +
      'if ($s.Status -ne "Running") { exit 1 }\n',
    parameters: [{ name: 'serviceName', type: 'string', required: true, description: 'Service name, e.g. wuauserv' }],
    timeoutSeconds: 120,
    runAs: 'system',
    version: 1,
    exitCodeSeverityMapping: { '1': 'high' },
  },
  {
    id: '5c1f0a2e-7b1d-4c35-9a51-0d6e2f3a1004',
    name: 'Record uptime in a custom field',
    description: 'Writes the uptime in seconds to the device custom field "uptimeSeconds" (define it with script writes allowed).',
    category: 'Inventory',
    osTypes: ['linux'],
    language: 'bash',
    content: '#!/usr/bin/env bash\nset -euo pipefail\nup=$(cut -d. -f1 /proc/uptime)\necho "::svc:custom-fields::{\\"uptimeSeconds\\": ${up}}"\n',
    parameters: [],
    timeoutSeconds: 30,
    runAs: 'system',
    version: 1,
    exitCodeSeverityMapping: null,
  },
];
