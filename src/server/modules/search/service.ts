import type { SearchResult } from '../../../contract/search.js';
import type { Db } from '../../db/connection.js';
import { grants, type RequestContext } from '../../context.js';
import { searchAlerts } from '../alerts/alerts-service.js';
import type { DevicesService } from '../devices/service.js';

/** One category of GET /search. Another module registers its own (the scripts service: `search(ctx, q, limit)`). */
export interface SearchSource {
  type: SearchResult['type'];
  /** The permission a caller needs to see this category at all ('' for none). */
  permission: string;
  search(ctx: RequestContext, q: string, limit: number): SearchResult[];
}

/** 05 wire notes "4.5": categories come in this order, whatever the order of registration. */
const ORDER: SearchResult['type'][] = ['devices', 'scripts', 'alerts', 'settings'];

const SETTINGS: (SearchResult & { permission?: string })[] = [
  { id: 'settings-profile', type: 'settings', title: 'Profile settings', description: 'Manage your profile', href: '/settings/profile' },
  { id: 'settings-security', type: 'settings', title: 'Security settings', description: 'Manage MFA and account security', href: '/settings/security' },
  { id: 'settings-users', type: 'settings', title: 'User management', description: 'Manage users and roles', href: '/settings/users', permission: 'users:read' },
];

/** The per-category cap: ceil(limit / 4) clamped to 1-8 (05 wire notes "4.5"). */
export function categoryCap(limit: number): number {
  return Math.min(8, Math.max(1, Math.ceil(limit / 4)));
}

/** GET /search: a case-insensitive substring match per category, permission-aware, capped, in a fixed order. */
export class SearchService {
  private readonly sources: SearchSource[] = [];

  constructor(db: Db, devices: DevicesService) {
    this.register({ type: 'devices', permission: 'devices:read', search: (ctx, q, limit) => devices.search(ctx, q, limit) });
    this.register({
      type: 'alerts',
      permission: 'alerts:read',
      search: (ctx, q, limit) =>
        searchAlerts(db, ctx.caller, q, limit).map((a) => ({
          id: a.id,
          type: 'alerts' as const,
          title: a.title,
          description: a.severity || a.message,
        })),
    });
    this.register({
      type: 'settings',
      permission: '',
      search: (ctx, q, limit) => {
        const needle = q.toLowerCase();
        return SETTINGS.filter(
          (s) => (s.permission === undefined || grants(ctx.caller.permissions, s.permission)) && (s.title.toLowerCase().includes(needle) || s.description.toLowerCase().includes(needle)),
        )
          .slice(0, limit)
          .map(({ permission: _permission, ...entry }) => entry);
      },
    });
  }

  register(source: SearchSource): void {
    this.sources.push(source);
  }

  search(ctx: RequestContext, q: string, limit: number): { results: SearchResult[] } {
    const cap = categoryCap(limit);
    const allowed = this.sources.filter((s) => s.permission === '' || grants(ctx.caller.permissions, s.permission));
    allowed.sort((a, b) => ORDER.indexOf(a.type) - ORDER.indexOf(b.type));
    const results = allowed.flatMap((s) => s.search(ctx, q, cap).slice(0, cap));
    return { results: results.slice(0, limit) };
  }
}
