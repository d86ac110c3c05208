import { createFlags } from '../../cli/api-command.js';
import { permissionFlags, withPermissions } from '../../cli/permissions.js';
import { RoleCommand } from '../../cli/role-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { roles } from '../../client/endpoints.js';

const body = bodyFlags(roles.create, { omit: ['permissions'] });

export default class RolesCreate extends RoleCommand<typeof RolesCreate> {
  static override summary = 'Create a custom role owned by your partner or organization (needs a session with MFA)';
  static override description = `Grant permissions with --permission resource:action (repeatable) or --permissions-file; \`svc roles permissions\` lists them. A role may inherit from a parent of the same scope (--parent-role-id). You can grant only permissions you hold, never *:*. System administrators name the owner with --partner-id or --org-id.`;
  static override examples = [
    '<%= config.bin %> roles create --name "Helpdesk" --permission devices:read --permission devices:execute',
    '<%= config.bin %> roles create --name "Read only" --permission devices:read,sites:read,alerts:read --parent-role-id 5e1b…',
    '<%= config.bin %> roles create --name Auditor --permissions-file auditor.yaml --description "Reads the audit log"',
    '<%= config.bin %> roles create --from-file role.json',
  ];
  static override flags = { ...body.flags, ...permissionFlags, ...createFlags };

  async run() {
    const request = await withPermissions(await this.bodyFrom(body), this.flags);
    return this.call(roles.create, { body: request });
  }
}
