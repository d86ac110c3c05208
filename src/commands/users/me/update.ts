import { bodyCommand } from '../../../cli/resource-commands.js';
import { auth } from '../../../client/endpoints.js';

export default bodyCommand(auth.updateMe, {
  summary: "Update the signed-in user's name or avatar",
  examples: ['<%= config.bin %> users me update --name "Ada Lovelace"', '<%= config.bin %> users me update --avatar-url null'],
});
