import { gzipSync } from 'node:zlib';
import { expect } from 'vitest';
import type { TestApp } from './server.js';

const API = '/api/v1';

export interface AgentCommand {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  env: Record<string, string>;
  createdAt: string;
}

export interface AgentResult {
  status: 'completed' | 'failed';
  exitCode?: number;
  stdout?: string;
  stderr?: string;
  error?: string;
}

/**
 * A device's agent as the server sees it, over the real routes: enrolled with an enrollment key, it fetches its
 * commands (`GET /agents/:id/commands`) and reports each result (`POST …/result`) with its bearer token.
 */
export class SimulatedAgent {
  constructor(
    /** The in-process app, or anything with its `call` (the e2e tests' HTTP caller for a real server process). */
    private readonly t: Pick<TestApp, 'call'>,
    readonly agentId: string,
    readonly deviceId: string,
    readonly token: string,
  ) {}

  static async enroll(t: Pick<TestApp, 'call'>, adminToken: string, orgId: string, device: { hostname?: string; osType?: 'windows' | 'macos' | 'linux'; siteId?: string } = {}): Promise<SimulatedAgent> {
    const key = await t.call('POST', `${API}/enrollment-keys`, { token: adminToken, body: { orgId, name: 'sim', ...(device.siteId ? { siteId: device.siteId } : {}) } });
    expect(key.status, key.text).toBe(201);
    const res = await t.call('POST', `${API}/agents/enroll`, {
      body: { enrollmentKey: key.body.key, hostname: device.hostname ?? 'sim-01', osType: device.osType ?? 'linux', osVersion: '1', architecture: 'x86_64', agentVersion: '1.0.0' },
    });
    expect(res.status, res.text).toBe(201);
    return new SimulatedAgent(t, res.body.agentId, res.body.deviceId, res.body.authToken);
  }

  /** One fetch of pending commands. */
  async fetch(query = ''): Promise<AgentCommand[]> {
    const res = await this.t.call('GET', `${API}/agents/${this.agentId}/commands${query}`, { token: this.token });
    expect(res.status, res.text).toBe(200);
    return res.body.commands as AgentCommand[];
  }

  report(commandId: string, result: AgentResult) {
    return this.t.call('POST', `${API}/agents/${this.agentId}/commands/${commandId}/result`, { token: this.token, body: result });
  }

  /** Sends diagnostic log entries (`POST /agents/:id/logs`, 03 §4.4), gzipped with `gzip: true`; returns the answer. */
  sendLogs(logs: Record<string, unknown>[], options: { gzip?: boolean } = {}) {
    const url = `${API}/agents/${this.agentId}/logs`;
    if (!options.gzip) return this.t.call('POST', url, { token: this.token, body: { logs } });
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
    return this.t.call('POST', url, { token: this.token, headers, body: gzipSync(JSON.stringify({ logs })) });
  }

  /** Sends OS event log entries (`PUT /agents/:id/eventlogs`, 03 §4.4); returns the answer. */
  sendEvents(events: Record<string, unknown>[]) {
    return this.t.call('PUT', `${API}/agents/${this.agentId}/eventlogs`, { token: this.token, body: { events } });
  }

  /** Reports in (`POST /agents/:id/heartbeat`) with inventory such as `software`; returns the answer. */
  heartbeat(body: Record<string, unknown> = {}) {
    return this.t.call('POST', `${API}/agents/${this.agentId}/heartbeat`, { token: this.token, body });
  }

  /** Fetches once and answers every command with `run` (what the agent would do), returning what it ran. */
  async work(run: (command: AgentCommand) => AgentResult): Promise<AgentCommand[]> {
    const commands = await this.fetch();
    for (const command of commands) {
      const res = await this.report(command.id, run(command));
      expect(res.status, res.text).toBe(200);
    }
    return commands;
  }
}
