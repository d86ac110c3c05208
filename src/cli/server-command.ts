import { BaseCommand, CommandError, type CommandClass } from './base-command.js';
import { dataDirFlag, serverConfig } from './server-flags.js';

type ServerConfigOf = Awaited<ReturnType<typeof serverConfig>>;

/** The shape of src/server/ops/errors.ts's OpsError, recognised without importing server code. */
interface OpsErrorLike extends Error {
  name: 'OpsError';
  exitCode: number;
  code: string;
  hint?: string;
}

function isOpsError(err: unknown): err is OpsErrorLike {
  return (
    err instanceof Error &&
    err.name === 'OpsError' &&
    typeof (err as Partial<OpsErrorLike>).exitCode === 'number' &&
    typeof (err as Partial<OpsErrorLike>).code === 'string'
  );
}

/**
 * The `svc server …` family: the data dir flag, the server configuration (environment and flags, parsed
 * with zod; a bad variable is exit 2 naming it), and the exit codes of the operations' refusals. Server code
 * is imported only inside `run()`, so loading this class costs other commands nothing.
 */
export abstract class ServerCommand<T extends CommandClass> extends BaseCommand<T> {
  static override baseFlags = { ...BaseCommand.baseFlags, ...dataDirFlag };

  protected async serverConfig(
    extra: {
      host?: string | undefined;
      port?: number | undefined;
      'log-level'?: string | undefined;
      'log-file'?: string | undefined;
    } = {},
  ): Promise<ServerConfigOf> {
    const flags = this.flags as { 'data-dir'?: string | undefined };
    return serverConfig({ 'data-dir': flags['data-dir'], ...extra });
  }

  protected override async catch(err: Error): Promise<never> {
    if (isOpsError(err)) return super.catch(new CommandError(err.message, err.exitCode, err.code, err.hint));
    return super.catch(err);
  }
}
