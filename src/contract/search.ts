import { z } from 'zod';
import { endpoint } from './endpoint.js';

export const SearchResultSchema = z.object({
  id: z.string(),
  type: z.enum(['devices', 'scripts', 'alerts', 'settings']),
  title: z.string(),
  description: z.string(),
  href: z.string().optional(),
});
export type SearchResult = z.infer<typeof SearchResultSchema>;

/** Global search (02 §4.5, 05 wire notes "4.5"): bearer only, each category as the caller's permissions allow. */
export const search = {
  search: endpoint({
    method: 'GET',
    path: '/search',
    query: z.object({
      q: z.string().trim().min(1).max(100).describe('What to look for (1-100 characters, case-insensitive substring)'),
      limit: z.coerce.number().int().min(1).max(50).optional().default(20).describe('Results, 1-50 (default 20)'),
    }),
    responses: { 200: z.object({ results: z.array(SearchResultSchema) }) },
    auth: { sessionOnly: true },
    summary: 'Search devices, scripts, alerts and settings',
  }),
} as const;
