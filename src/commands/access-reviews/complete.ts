import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { accessReviews } from '../../client/endpoints.js';

export default class AccessReviewsComplete extends ApiCommand<typeof AccessReviewsComplete> {
  static override summary =
    'Complete a review with no pending items: users marked revoked leave the scope and their sessions end';
  static override description = `A completed review cannot be changed (exit 6). Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2). Needs users:write.`;
  static override examples = [
    '<%= config.bin %> access-reviews complete 8f0e…',
    '<%= config.bin %> access-reviews complete 8f0e… --yes --output json',
  ];
  static override args = idArg('Access review');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(
      `Complete access review ${this.args.id}? Users marked revoked lose their access at once; the review can no longer change.`,
    );
    return this.call(accessReviews.complete, { params: { id: this.args.id } });
  }
}
