import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { showsRows } from '../../cli/row-output.js';
import { accessReviews } from '../../client/endpoints.js';

export default class AccessReviewsGet extends ApiCommand<typeof AccessReviewsGet> {
  static override summary =
    'Show an access review: one row per item (user, role, decision) in tables, CSV and JSON lines';
  static override description = `Tables, CSV and JSON lines list the review's items, one row per user-role mapping, for auditors and spreadsheets; JSON and YAML print the whole review with its items. --quiet prints the item ids. On a terminal the review's name, status and progress go to stderr above the table.

To decide many items at once, write a CSV with the columns itemId, decision and notes and pass it to \`svc access-reviews decide ID --from-file FILE\`.`;
  static override examples = [
    '<%= config.bin %> access-reviews get 8f0e…',
    '<%= config.bin %> access-reviews get 8f0e… --output csv > q1-review.csv',
    '<%= config.bin %> access-reviews get 8f0e… --output csv --columns id,userEmail,roleName,decision,notes',
    '<%= config.bin %> access-reviews get 8f0e… --output json',
  ];
  static override args = idArg('Access review');
  static override columns = [
    'id',
    'userName',
    'userEmail',
    'roleName',
    'lastActiveAt',
    'decision',
    'notes',
    'reviewedAt',
    'permissions',
  ];

  async run() {
    const review = await this.call(accessReviews.get, { params: { id: this.args.id } });
    if (!showsRows(this.format, this.flags.quiet)) return review;
    if (this.format === 'table') {
      const pending = review.items.filter((i) => i.decision === 'pending').length;
      this.info(
        `${review.name} (${review.status})${review.dueDate ? `, due ${review.dueDate}` : ''}: ${review.items.length - pending} of ${review.items.length} items decided`,
      );
    }
    return review.items;
  }
}
