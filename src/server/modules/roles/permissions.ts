import { NAMED_PERMISSIONS } from '../../../contract/roles.js';
import { grants } from '../../context.js';

/**
 * Whether held grants cover a wanted one, for handing permissions out (role grants, role assignment).
 * A concrete permission is covered as route checks see it (`grants`). A wildcard one is covered when it is
 * held as such, or when every named permission it stands for is held: route checks only ever ask for named
 * permissions, so an Org Admin can hand out `*:read` (all of whose named reads it holds) but not `*:*`.
 * `*:*` itself is covered only by `*:*`.
 */
export function covers(held: readonly string[], wanted: string): boolean {
  if (grants(held, wanted)) return true;
  const [resource, action] = wanted.split(':');
  if (resource === '*' && action === '*') return false;
  if (resource !== '*' && action !== '*') return false;
  return NAMED_PERMISSIONS.filter((named) => {
    const [r, a] = named.split(':');
    return (resource === '*' || resource === r) && (action === '*' || action === a);
  }).every((named) => grants(held, named));
}

/** The wanted permissions that the held grants do not cover, sorted. */
export function uncovered(held: readonly string[], wanted: Iterable<string>): string[] {
  return [...new Set(wanted)].filter((p) => !covers(held, p)).sort();
}
