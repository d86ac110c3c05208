import type { ServerConfig } from '../config.js';

/** The address users reach the service at: `SVC_PUBLIC_URL`, else `http://<host>:<port>`. */
export function publicBaseUrl(config: Pick<ServerConfig, 'publicUrl' | 'host' | 'port'>): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

/** A link carrying a single-use token: `<base>/<page>?token=<token>`. */
export function tokenLink(base: string, page: 'accept-invite' | 'reset-password', token: string): string {
  return `${base}/${page}?token=${encodeURIComponent(token)}`;
}
