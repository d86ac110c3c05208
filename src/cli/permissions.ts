import { Flags } from './flags.js';
import { readDataFile } from './files.js';
import { UsageError } from './prompts.js';

export interface PermissionGrant {
  resource: string;
  action: string;
}

/** `devices:read` → `{ resource: 'devices', action: 'read' }`; the contract checks the names themselves. */
export function parsePermission(text: string, where: string): PermissionGrant {
  const at = text.indexOf(':');
  const resource = text.slice(0, at).trim();
  const action = text.slice(at + 1).trim();
  if (at <= 0 || resource === '' || action === '' || action.includes(':')) {
    throw new UsageError(`${where}: expected resource:action (e.g. devices:read), got "${text}"`);
  }
  return { resource, action };
}

/** Grants given as `resource:action` strings or `{resource, action}` objects, in any mix. */
export function normalizePermissions(value: unknown, where: string): PermissionGrant[] {
  if (!Array.isArray(value))
    throw new UsageError(`${where}: expected a list of permissions (resource:action or {resource, action})`);
  return value.map((entry: unknown, index) => {
    if (typeof entry === 'string') return parsePermission(entry, `${where}[${index}]`);
    if (typeof entry === 'object' && entry !== null && 'resource' in entry && 'action' in entry) {
      const { resource, action } = entry;
      if (typeof resource === 'string' && typeof action === 'string') return { resource, action };
    }
    throw new UsageError(
      `${where}[${index}]: expected resource:action or {resource, action}, got ${JSON.stringify(entry)}`,
    );
  });
}

/** The grants of `--permissions-file`: a list, or an object with a `permissions` list (what `svc roles get -o json`
 * prints, so one role's grants can be copied to another). */
export async function readPermissionsFile(file: string): Promise<PermissionGrant[]> {
  const data = await readDataFile(file, '--permissions-file');
  const list =
    typeof data === 'object' && data !== null && !Array.isArray(data) && 'permissions' in data
      ? data.permissions
      : data;
  return normalizePermissions(list, `--permissions-file ${file}`);
}

/** Without duplicates, first occurrence kept. */
export function uniqueGrants(grants: readonly PermissionGrant[]): PermissionGrant[] {
  const seen = new Set<string>();
  return grants.filter((g) => {
    const key = `${g.resource}:${g.action}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `{resource, action}` → `resource:action`, for tables. */
export function grantText(grant: PermissionGrant): string {
  return `${grant.resource}:${grant.action}`;
}

/** `--permission` (repeatable) and `--permissions-file` of `svc roles create|update`. */
export const permissionFlags = {
  permission: Flags.string({
    summary: 'A permission to grant, resource:action (e.g. devices:read). Repeat the flag or separate with commas.',
    multiple: true,
  }),
  'permissions-file': Flags.string({
    summary:
      'JSON or YAML file with the permissions: a list of resource:action strings or {resource, action} objects (or a role as `svc roles get -o json` prints it).',
  }),
};

/**
 * The grants of a create or update body: `--permission` and `--permissions-file` together (when either is given)
 * replace those of `--from-file`; `resource:action` strings in any of them become `{resource, action}`.
 */
export async function withPermissions<B extends object>(
  body: B,
  flags: { permission?: string[] | undefined; 'permissions-file'?: string | undefined },
): Promise<B & { permissions?: PermissionGrant[] }> {
  const fromFlags = (flags.permission ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean)
    .map((v) => parsePermission(v, '--permission'));
  const fromFile = flags['permissions-file'] === undefined ? [] : await readPermissionsFile(flags['permissions-file']);
  if (flags.permission !== undefined || flags['permissions-file'] !== undefined)
    return { ...body, permissions: uniqueGrants([...fromFile, ...fromFlags]) };
  // A --from-file body may write grants as resource:action strings.
  if (!('permissions' in body) || body.permissions === undefined) return body;
  return { ...body, permissions: normalizePermissions(body.permissions, '--from-file permissions') };
}
