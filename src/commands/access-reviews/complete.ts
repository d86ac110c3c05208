import { confirmCommand } from '../../cli/resource-commands.js';
import { accessReviews } from '../../client/endpoints.js';

export default confirmCommand(accessReviews.complete, 'Access review', {
  summary: 'Complete a review with no pending items: users marked revoked leave the scope and their sessions end',
  description: `A completed review cannot be changed (exit 6). Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2). Needs users:write.`,
  examples: [
    '<%= config.bin %> access-reviews complete 8f0e…',
    '<%= config.bin %> access-reviews complete 8f0e… --yes --output json',
  ],
  confirm: (id) =>
    `Complete access review ${id}? Users marked revoked lose their access at once; the review can no longer change.`,
});
