import { ApiCommand } from './api-command.js';
import type { CommandClass } from './base-command.js';
import { grantText, type PermissionGrant } from './permissions.js';

function isGrant(value: unknown): value is PermissionGrant {
  return (
    typeof value === 'object' &&
    value !== null &&
    'resource' in value &&
    'action' in value &&
    typeof value.resource === 'string' &&
    typeof value.action === 'string'
  );
}

/** The roles family: a role's own permissions in a table read `devices:read users:read` in full instead of
 * shortened JSON. Other formats print the API's object as it is. */
export abstract class RoleCommand<T extends CommandClass> extends ApiCommand<T> {
  static override columns = [
    'id',
    'name',
    'description',
    'scope',
    'isSystem',
    'parentRoleId',
    'partnerId',
    'orgId',
    'permissions',
    'userCount',
    'updatedAt',
  ];

  protected override print(result: unknown): void {
    if (
      this.format === 'table' &&
      !this.flags.quiet &&
      typeof result === 'object' &&
      result !== null &&
      'permissions' in result &&
      Array.isArray(result.permissions)
    ) {
      const permissions: unknown[] = result.permissions;
      super.print({
        ...result,
        permissions: permissions.map((p) => (isGrant(p) ? grantText(p) : String(p))).join(' '),
      });
      return;
    }
    super.print(result);
  }
}
