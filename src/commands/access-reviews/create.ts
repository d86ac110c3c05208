import { createCommand } from '../../cli/resource-commands.js';
import { accessReviews } from '../../client/endpoints.js';

export default createCommand(accessReviews.create, {
  summary:
    'Start an access review: one pending item per user-role mapping of your partner or organization (needs users:write)',
  examples: [
    '<%= config.bin %> access-reviews create --name "Q1 2026" --due-date 2026-03-31',
    'REVIEW=$(<%= config.bin %> access-reviews create --name "Q1 2026" --reviewer-id 2c8d… --quiet)',
  ],
});
