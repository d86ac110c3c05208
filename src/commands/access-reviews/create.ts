import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { accessReviews } from '../../client/endpoints.js';

const body = bodyFlags(accessReviews.create);

export default class AccessReviewsCreate extends ApiCommand<typeof AccessReviewsCreate> {
  static override summary =
    'Start an access review: one pending item per user-role mapping of your partner or organization (needs users:write)';
  static override examples = [
    '<%= config.bin %> access-reviews create --name "Q1 2026" --due-date 2026-03-31',
    'REVIEW=$(<%= config.bin %> access-reviews create --name "Q1 2026" --reviewer-id 2c8d… --quiet)',
  ];
  static override flags = { ...body.flags, ...createFlags };

  async run() {
    return this.call(accessReviews.create, { body: await this.bodyFrom(body) });
  }
}
