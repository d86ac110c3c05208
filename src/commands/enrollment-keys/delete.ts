import { confirmCommand } from '../../cli/resource-commands.js';
import { enrollmentKeys } from '../../client/endpoints.js';

export default confirmCommand(enrollmentKeys.delete, 'Enrollment key', {
  summary: 'Delete an enrollment key (permanently; enrolled devices stay)',
  examples: ['<%= config.bin %> enrollment-keys delete 61c7…', '<%= config.bin %> enrollment-keys delete 61c7… --yes'],
  confirm: (id) => `Delete enrollment key ${id} permanently? Agents can no longer enroll with it.`,
});
