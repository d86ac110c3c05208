import { Flags } from '../../cli/flags.js';
import { ServerCommand } from '../../cli/server-command.js';
import { acceptedYesFlag } from '../../cli/server-flags.js';

export default class ServerStop extends ServerCommand<typeof ServerStop> {
  static override summary = 'Stop the bundled server running against the data dir, gracefully';
  static override description = `Sends SIGTERM to the server recorded in <data dir>/server.pid and waits for it to exit: it stops accepting connections, finishes the requests in flight (cutting off those still running after SVC_SHUTDOWN_TIMEOUT_MS), closes the database and removes the pid file.

Exit codes: 0 stopped; 5 no server is running against the data dir (a stale pid file is removed); 6 the data dir is held by \`svc server init\`, \`migrate\` or \`restore\`, not a server; 4 the server runs as another user; 8 it is still running after --wait seconds.`;
  static override examples = [
    '<%= config.bin %> server stop',
    '<%= config.bin %> server stop --data-dir /var/lib/svc --wait 60',
  ];
  static override flags = {
    wait: Flags.integer({ summary: 'Seconds to wait for the server to exit (default 30).', min: 1, max: 3600 }),
    ...acceptedYesFlag('stop does not ask.'),
  };
  static override columns = ['pid', 'url', 'dataDir', 'waitedMs'];
  static override quietField = 'pid';

  async run() {
    const config = await this.serverConfig();
    const { stopServer } = await import('../../server/ops/stop.js');
    const result = await stopServer(config.dataDir, { timeoutMs: (this.flags.wait ?? 30) * 1000 });
    this.info(
      `Stopped the server (pid ${result.pid}${result.url ? `, ${result.url}` : ''}) in ${(result.waitedMs / 1000).toFixed(1)} s.`,
    );
    return result;
  }
}
