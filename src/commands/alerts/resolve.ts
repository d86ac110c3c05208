import { alertTransitionCommand } from '../../cli/alerts-command.js';
import { Flags } from '../../cli/flags.js';
import { alerts } from '../../client/endpoints.js';

export default alertTransitionCommand(alerts.resolve, alerts.bulk, 'resolve', { note: Flags.string({ summary: 'Resolution note' }) }, {
  summary: "Resolve alerts; the rule's cooldown starts (several ids: one bulk request)",
  examples: ['<%= config.bin %> alerts resolve 2a7c… --note "Disk cleaned"', '<%= config.bin %> alerts resolve 2a7c… 9f01…'],
});
