import { getCommand } from '../../cli/resource-commands.js';
import { enrollmentKeys } from '../../client/endpoints.js';

export default getCommand(enrollmentKeys.get, 'Enrollment key', {
  summary: "Show an enrollment key's metadata (never the key itself)",
  examples: [
    '<%= config.bin %> enrollment-keys get 61c7…',
    '<%= config.bin %> enrollment-keys get 61c7… --output yaml',
  ],
});
