import { Flags } from './flags.js';

/** Where the bundled server keeps its data (CLI.md "The bundled server"). */
export const dataDirFlag = {
  'data-dir': Flags.string({ summary: 'Data directory (database, server keys). Default: the XDG data dir.', env: 'SVC_DATA_DIR' }),
};

/** Loads the server configuration lazily, so the server's code is imported only by `svc server …`. */
export async function serverConfig(flags: {
  'data-dir'?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  'log-level'?: string | undefined;
  'log-file'?: string | undefined;
}) {
  const { loadConfig, ConfigError } = await import('../server/config.js');
  const { CommandError } = await import('./base-command.js');
  try {
    return loadConfig(process.env, {
      dataDir: flags['data-dir'],
      host: flags.host,
      port: flags.port,
      logLevel: flags['log-level'],
      logFile: flags['log-file'],
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new CommandError(err.message, 2, 'INVALID_CONFIG');
    throw err;
  }
}

/** `--yes` of a server command that never asks: accepted so that scripts can pass it to every mutating command.
 * `note` ends the help line ("init does not ask."). */
export function acceptedYesFlag(note: string) {
  return { yes: Flags.boolean({ char: 'y', summary: `Accepted for uniformity with other mutating commands; ${note}` }) };
}
