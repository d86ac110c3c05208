import { MockAgent, type Interceptable, type MockCallHistoryLog } from 'undici';
import { HttpClient, type HttpClientOptions } from '../../src/client/index.js';

export const ORIGIN = 'http://svc.test';
export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export interface Harness {
  agent: MockAgent;
  pool: Interceptable;
  client: HttpClient;
  calls: () => MockCallHistoryLog[];
  close: () => Promise<void>;
}

/** A client on a MockAgent with net connect disabled and tiny backoff, so retry tests stay fast. */
export function harness(options: Partial<HttpClientOptions> = {}): Harness {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  const pool = agent.get(ORIGIN);
  const client = new HttpClient({ baseUrl: ORIGIN, dispatcher: agent, backoff: { baseMs: 1, capMs: 2 }, ...options });
  return {
    agent,
    pool,
    client,
    calls: () => agent.getCallHistory()?.calls() ?? [],
    close: () => agent.close(),
  };
}

export function header(log: MockCallHistoryLog | undefined, name: string): string | undefined {
  const value = log?.headers?.[name];
  return Array.isArray(value) ? value[0] : value;
}

export function connectionRefused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
}
