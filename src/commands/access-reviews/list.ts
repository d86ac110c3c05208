import { ApiCommand } from '../../cli/api-command.js';
import { accessReviews } from '../../client/endpoints.js';

export default class AccessReviewsList extends ApiCommand<typeof AccessReviewsList> {
  static override summary = 'List the access reviews of your partner or organization, oldest first';
  static override examples = [
    '<%= config.bin %> access-reviews list',
    '<%= config.bin %> access-reviews list --output csv > reviews.csv',
  ];
  static override columns = ['id', 'name', 'status', 'reviewerName', 'dueDate', 'createdAt', 'completedAt'];

  async run() {
    return (await this.call(accessReviews.list)).data;
  }
}
