/** A refusal or failure of a `svc server …` operation, with the exit code of CLI.md's table; the server
 * commands turn it into their error line (src/cli/server-command.ts). Kept free of imports so the CLI can
 * recognise it without loading server code. */
export class OpsError extends Error {
  override name = 'OpsError';
  constructor(
    message: string,
    /** 2 bad input, 4 not permitted (a privileged port, another user's process), 5 nothing there (no server
     * running), 6 conflicting state (a running server, an existing file, keys of another database), 8 database
     * missing or unreadable, a server that would not stop. */
    readonly exitCode: 2 | 4 | 5 | 6 | 8,
    readonly code: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}
