/** A refusal or failure of a `svc server …` operation, with the exit code of CLI.md's table; the server
 * commands turn it into their error line (src/cli/server-command.ts). Kept free of imports so the CLI can
 * recognise it without loading server code. */
export class OpsError extends Error {
  override name = 'OpsError';
  constructor(
    message: string,
    /** 2 bad input, 6 conflicting state (a running server, an existing file), 8 database missing or unreadable. */
    readonly exitCode: 2 | 6 | 8,
    readonly code: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}
