import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { showsRows } from '../../cli/row-output.js';
import { roles } from '../../client/endpoints.js';

export default class RolesEffectivePermissions extends ApiCommand<typeof RolesEffectivePermissions> {
  static override summary = "A role's direct and inherited permissions, each with the role it comes from";
  static override description = `Tables, CSV and JSON lines list one permission per row (resource, action, inherited, sourceRoleName); JSON and YAML print the server's whole answer, with the inheritance chain. --quiet prints resource:action, one per line.`;
  static override examples = [
    '<%= config.bin %> roles effective-permissions 5e1b…',
    '<%= config.bin %> roles effective-permissions 5e1b… --output json | jq .inheritanceChain',
  ];
  static override args = idArg('Role');
  static override columns = ['resource', 'action', 'inherited', 'sourceRoleName'];

  async run() {
    const result = await this.call(roles.effectivePermissions, { params: { id: this.args.id } });
    if (!showsRows(this.format, this.flags.quiet)) return result;
    if (this.format === 'table' && result.inheritanceChain.length > 1)
      this.info(`Inheritance: ${result.inheritanceChain.map((r) => r.name).join(' → ')}`);
    // -q prints resource:action, one per line.
    return this.flags.quiet ? result.permissions.map((p) => `${p.resource}:${p.action}`) : result.permissions;
  }
}
