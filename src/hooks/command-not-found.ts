import type { Hook } from '@oclif/core';
import { closestCommand } from '../cli/suggest.js';

/**
 * An unknown command is a usage error (exit 2) that names the closest command; it never runs a guess
 * (CLI.md "oclif pitfalls": no @oclif/plugin-not-found).
 */
const hook: Hook.CommandNotFound = async function (options) {
  const { id, config } = options;
  const separator = config.topicSeparator;
  const commands = config.commands.filter((c) => !c.hidden).map((c) => ({ id: c.id, takesArgs: Object.keys(c.args ?? {}).length > 0 || c.strict === false }));
  const typed = id.split(':').join(separator);
  const suggestion = closestCommand(id, commands);
  const lines = [`Error: "${config.bin} ${typed}" is not a ${config.bin} command.`];
  if (suggestion) lines.push(`Did you mean \`${config.bin} ${suggestion.split(':').join(separator)}\`?`);
  lines.push(`Run \`${config.bin} help\` for every command.`);
  process.stderr.write(`${lines.join('\n')}\n`);
  this.exit(2);
};

export default hook;
