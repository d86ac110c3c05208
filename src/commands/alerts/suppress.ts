import { alertTransitionCommand } from '../../cli/alerts-command.js';
import { Flags } from '../../cli/flags.js';
import { alerts } from '../../client/endpoints.js';

export default alertTransitionCommand(
  alerts.suppress,
  alerts.bulk,
  'suppress',
  { until: Flags.string({ summary: 'Suppressed until (ISO 8601, in the future); omitted: indefinitely' }) },
  {
    summary: 'Suppress alerts until a time, or indefinitely (several ids: one bulk request)',
    examples: ['<%= config.bin %> alerts suppress 2a7c… --until 2026-12-01T08:00:00Z', '<%= config.bin %> alerts suppress 2a7c… 9f01…'],
  },
);
