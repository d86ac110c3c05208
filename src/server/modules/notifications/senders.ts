import type { ChannelType } from '../../../contract/alert-channels.js';
import type { ServerConfig } from '../../config.js';
import type { Mailer } from '../../delivery/mailer.js';
import { OutboundBlockedError, type OutboundClient, type OutboundResponse } from '../../delivery/outbound.js';
import { INCIDENT_SEVERITY_OF, type AlertEventPayload } from './alert-event.js';
import { recipientsOf, redacted, TIMEOUT, type ChannelConfig } from './channel-config.js';

/** What a sender is told: the alert (ALERT-EVENTS.md payload) and the event it is sent for. */
export interface AlertNotice {
  alert: Pick<
    AlertEventPayload,
    'alertId' | 'orgId' | 'orgName' | 'ruleId' | 'ruleName' | 'deviceId' | 'deviceName' | 'severity' | 'title' | 'message' | 'context' | 'triggeredAt'
  >;
  event: string;
}

/** The outcome of one send; 05-wire-notes 4.1 shows it as the `testResult` of the test route. */
export interface SendResult {
  success: boolean;
  message: string;
  details?: Record<string, unknown>;
}

/** The one interface every channel type is sent through. */
export interface ChannelSender {
  send(config: ChannelConfig, notice: AlertNotice): Promise<SendResult>;
}

export const EMAIL_NOT_CONFIGURED = 'Email service not configured';
export const SMS_NOT_CONFIGURED = 'SMS service not configured';
/** 05-wire-notes 2.4: the User-Agent of the webhook channel sender. */
export const WEBHOOK_USER_AGENT = 'Svc-RMM/1.0';
/** 02 §2.4, §8. */
export const SMS_MAX_CHARS = 1400;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** `[SEVERITY] Alert Name: Summary` (02 §2.4, chat channels). */
export function chatText(notice: AlertNotice, dashboardUrl: string | null): string {
  const { alert } = notice;
  const line = `[${alert.severity.toUpperCase()}] ${alert.title}: ${alert.message}`;
  return dashboardUrl ? `${line}\n${dashboardUrl}` : line;
}

/** `[SEVERITY] Alert Name on Device (Org): Summary`, at most 1400 characters (02 §2.4, §8). */
export function smsText(notice: AlertNotice): string {
  const { alert } = notice;
  const device = alert.deviceName ? ` on ${alert.deviceName}` : '';
  return `[${alert.severity.toUpperCase()}] ${alert.title}${device} (${alert.orgName}): ${alert.message}`.slice(0, SMS_MAX_CHARS);
}

/** The value at a dot path (`context.disk.freePercent`). */
function at(root: Record<string, unknown>, path: string): unknown {
  let value: unknown = root;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * 02 §2.4 payload templates: `{{dot.path}}` over the template variables. A placeholder that is a whole JSON
 * string (`"{{x}}"`) or stands outside any string becomes the value as JSON (numbers stay numbers, unknown paths
 * null); one inside a longer string becomes the value's text, escaped for JSON (unknown: empty). docs/api-notes.md.
 */
export function renderTemplate(template: string, vars: Record<string, unknown>): string {
  const asJson = (path: string) => JSON.stringify(at(vars, path) ?? null);
  const whole = template.replace(/"\{\{\s*([\w.]+)\s*\}\}"/g, (_, path: string) => asJson(path));
  let out = '';
  let inString = false;
  for (let i = 0; i < whole.length; i++) {
    const ch = whole[i] as string;
    if (ch === '\\' && inString) {
      out += ch + (whole[i + 1] ?? '');
      i++;
      continue;
    }
    if (ch === '"') inString = !inString;
    const placeholder = ch === '{' ? /^\{\{\s*([\w.]+)\s*\}\}/.exec(whole.slice(i)) : null;
    if (placeholder) {
      const path = placeholder[1] as string;
      if (inString) {
        const value = at(vars, path);
        const text = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
        out += JSON.stringify(text).slice(1, -1);
      } else {
        out += asJson(path);
      }
      i += placeholder[0].length - 1;
      continue;
    }
    out += ch;
  }
  return out;
}

export interface SenderSettings {
  publicUrl: string | undefined;
  alerting: ServerConfig['alerting'];
}

type Sleep = (ms: number) => Promise<void>;
const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The senders of the six channel types of 02 §2.4. Every HTTP request goes through the one outbound guard. */
export class Senders {
  private readonly byType: Record<ChannelType, ChannelSender>;

  constructor(
    private readonly mailer: Mailer,
    private readonly outbound: OutboundClient,
    private readonly settings: SenderSettings,
    private readonly sleep: Sleep = realSleep,
  ) {
    this.byType = {
      email: { send: (c, n) => this.email(c, n) },
      slack: { send: (c, n) => this.chat(c, n) },
      teams: { send: (c, n) => this.chat(c, n) },
      webhook: { send: (c, n) => this.webhook(c, n) },
      pagerduty: { send: (c, n) => this.incident(c, n) },
      sms: { send: (c, n) => this.sms(c, n) },
    };
  }

  /** Sends, never throws: any failure is a result with success false. */
  async send(type: ChannelType, config: ChannelConfig, notice: AlertNotice): Promise<SendResult> {
    try {
      return await this.byType[type].send(config, notice);
    } catch (err) {
      return { success: false, message: errorText(err) };
    }
  }

  /** The deep link to the alert when a public (dashboard) URL is configured. */
  dashboardUrl(alertId: string): string | null {
    return this.settings.publicUrl ? `${this.settings.publicUrl.replace(/\/+$/, '')}/alerts/${alertId}` : null;
  }

  private async email(config: ChannelConfig, notice: AlertNotice): Promise<SendResult> {
    const recipients = recipientsOf(config);
    if (!this.mailer.configured) return { success: false, message: EMAIL_NOT_CONFIGURED, details: { recipients } };
    const { alert } = notice;
    const link = this.dashboardUrl(alert.alertId);
    const lines = [
      `${alert.title}`,
      '',
      alert.message,
      '',
      `Severity: ${alert.severity}`,
      `Organization: ${alert.orgName}`,
      ...(alert.deviceName ? [`Device: ${alert.deviceName}`] : []),
      `Triggered: ${alert.triggeredAt}`,
      ...(link ? ['', link] : []),
    ];
    const outcome = await this.mailer.send({
      to: recipients.join(', '),
      subject: `[${alert.severity.toUpperCase()}] ${alert.title}`,
      text: lines.join('\n'),
    });
    if (outcome === 'sent') return { success: true, message: `Email sent to ${recipients.length} recipient(s)`, details: { recipients } };
    if (outcome === 'not_configured') return { success: false, message: EMAIL_NOT_CONFIGURED, details: { recipients } };
    return { success: false, message: 'Email delivery failed', details: { recipients } };
  }

  /** 02 §2.4: chat channels reuse the webhook sender with a fixed body. */
  private async chat(config: ChannelConfig, notice: AlertNotice): Promise<SendResult> {
    const url = str(config.webhookUrl) ?? '';
    const body = JSON.stringify({ text: chatText(notice, this.dashboardUrl(notice.alert.alertId)) });
    const result = await this.post(url, { method: 'POST', headers: {}, body, timeoutMs: TIMEOUT.webhook, retryCount: 0 });
    return { ...result, details: { webhookUrl: redacted(url), statusCode: result.statusCode } };
  }

  /** The variables of payload templates (02 §2.4): the keys of the alert context, then the named ones. */
  templateVariables(notice: AlertNotice): Record<string, unknown> {
    const { alert } = notice;
    return {
      ...alert.context,
      context: alert.context,
      alertId: alert.alertId,
      alertName: alert.title,
      severity: alert.severity,
      summary: alert.message,
      deviceId: alert.deviceId,
      deviceName: alert.deviceName,
      orgId: alert.orgId,
      orgName: alert.orgName,
      triggeredAt: alert.triggeredAt,
      ruleId: alert.ruleId,
      ruleName: alert.ruleName,
      timestamp: new Date().toISOString(),
      dashboardUrl: this.dashboardUrl(alert.alertId),
    };
  }

  /** 02 §2.4: the default webhook body. */
  defaultBody(notice: AlertNotice): Record<string, unknown> {
    const { alert } = notice;
    return {
      event: notice.event,
      timestamp: new Date().toISOString(),
      alert: {
        id: alert.alertId,
        name: alert.title,
        severity: alert.severity,
        summary: alert.message,
        triggeredAt: alert.triggeredAt,
        ruleId: alert.ruleId,
        ruleName: alert.ruleName,
      },
      device: { id: alert.deviceId, name: alert.deviceName },
      organization: { id: alert.orgId, name: alert.orgName },
      context: alert.context,
    };
  }

  private async webhook(config: ChannelConfig, notice: AlertNotice): Promise<SendResult> {
    const url = str(config.url) ?? '';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((config.headers as Record<string, unknown> | undefined) ?? {})) if (typeof v === 'string') headers[k] = v;
    switch (config.authType) {
      case 'bearer':
        headers.authorization = `Bearer ${str(config.authToken) ?? ''}`;
        break;
      case 'basic':
        headers.authorization = `Basic ${Buffer.from(`${str(config.authUsername) ?? ''}:${str(config.authPassword) ?? ''}`).toString('base64')}`;
        break;
      case 'api_key':
        headers[str(config.apiKeyHeader) ?? 'x-api-key'] = str(config.apiKeyValue) ?? '';
        break;
      default:
    }
    const template = config.payloadTemplate;
    const body =
      typeof template === 'string' && template.trim() !== ''
        ? renderTemplate(template, this.templateVariables(notice))
        : typeof template === 'object' && template !== null
          ? renderTemplate(JSON.stringify(template), this.templateVariables(notice))
          : JSON.stringify(this.defaultBody(notice));
    const result = await this.post(url, {
      method: typeof config.method === 'string' ? config.method.toUpperCase() : 'POST',
      headers,
      body,
      timeoutMs: typeof config.timeout === 'number' ? config.timeout : TIMEOUT.webhook,
      retryCount: typeof config.retryCount === 'number' ? config.retryCount : 0,
    });
    return { ...result, details: { url: redacted(url), statusCode: result.statusCode } };
  }

  /**
   * One webhook-style request with the channel's retries (02 §2.4, 05-wire-notes 2.4): attempt n+1 waits 2^n s;
   * a 4xx, a redirect (redirects are errors) or a blocked address is final; 5xx, timeouts and network errors are
   * retried.
   */
  private async post(
    url: string,
    opts: { method: string; headers: Record<string, string>; body: string; timeoutMs: number; retryCount: number },
  ): Promise<SendResult & { statusCode: number | null }> {
    let last: SendResult & { statusCode: number | null } = { success: false, message: 'not sent', statusCode: null };
    for (let attempt = 0; attempt <= opts.retryCount; attempt++) {
      if (attempt > 0) await this.sleep(1000 * 2 ** (attempt - 1));
      let res: OutboundResponse;
      try {
        res = await this.outbound.request(url, {
          method: opts.method,
          headers: { 'content-type': 'application/json', 'user-agent': WEBHOOK_USER_AGENT, ...opts.headers },
          body: opts.body,
          timeoutMs: opts.timeoutMs,
          httpsOnly: true,
          maxResponseBytes: 64 * 1024,
        });
      } catch (err) {
        last = { success: false, message: errorText(err), statusCode: null };
        if (err instanceof OutboundBlockedError) return last;
        continue;
      }
      if (res.status >= 200 && res.status < 300) return { success: true, message: `Delivered (HTTP ${res.status})`, statusCode: res.status };
      last = { success: false, message: `Target answered HTTP ${res.status}`, statusCode: res.status };
      if (res.status < 500) return last;
    }
    return last;
  }

  /** 02 §2.4 incident channel: an events API v2 `trigger`. */
  private async incident(config: ChannelConfig, notice: AlertNotice): Promise<SendResult> {
    const { alert } = notice;
    const dedupKey = str(config.dedupKey) ?? alert.alertId;
    const severity = str(config.severity) ?? INCIDENT_SEVERITY_OF[alert.severity];
    const source = str(config.source) ?? alert.deviceName ?? 'svc';
    const body = {
      routing_key: str(config.routingKey) ?? str(config.integrationKey),
      event_action: 'trigger',
      dedup_key: dedupKey,
      payload: {
        summary: `${alert.title}: ${alert.message}`.slice(0, 1024),
        source,
        severity,
        timestamp: alert.triggeredAt,
        component: str(config.component) ?? alert.deviceName ?? 'svc',
        group: str(config.group) ?? alert.orgName,
        class: str(config.class) ?? alert.ruleName ?? undefined,
        custom_details: { ...alert.context, ...((config.customDetails as Record<string, unknown> | undefined) ?? {}) },
      },
      ...(this.dashboardUrl(alert.alertId) ? { links: [{ href: this.dashboardUrl(alert.alertId), text: 'Alert' }] } : {}),
    };
    const result = await this.post(this.settings.alerting.pagerdutyEventsUrl, {
      method: 'POST',
      headers: {},
      body: JSON.stringify(body),
      timeoutMs: typeof config.timeout === 'number' ? config.timeout : TIMEOUT.incident,
      retryCount: 0,
    });
    return { ...result, details: { statusCode: result.statusCode, dedupKey } };
  }

  /** 02 §2.4 SMS through Twilio Programmable Messaging: one message per recipient. */
  private async sms(config: ChannelConfig, notice: AlertNotice): Promise<SendResult> {
    const phoneNumbers = Array.isArray(config.phoneNumbers) ? config.phoneNumbers.filter((p): p is string => typeof p === 'string') : [];
    const twilio = this.settings.alerting.twilio;
    if (!twilio.accountSid || !twilio.authToken) {
      return { success: false, message: SMS_NOT_CONFIGURED, details: { phoneNumbers, sentCount: 0, failedCount: phoneNumbers.length } };
    }
    const from = str(config.from) ?? twilio.from;
    const service = str(config.messagingServiceSid);
    const url = `${twilio.apiUrl}/2010-04-01/Accounts/${encodeURIComponent(twilio.accountSid)}/Messages.json`;
    const auth = `Basic ${Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')}`;
    const text = smsText(notice);
    const errors: { phoneNumber: string; error: string }[] = [];
    let sentCount = 0;
    for (const to of phoneNumbers) {
      const form = new URLSearchParams({ To: to, Body: text });
      if (service) form.set('MessagingServiceSid', service);
      else if (from) form.set('From', from);
      try {
        const res = await this.outbound.request(url, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded', 'user-agent': WEBHOOK_USER_AGENT },
          body: form.toString(),
          timeoutMs: TIMEOUT.incident,
          httpsOnly: true,
          maxResponseBytes: 64 * 1024,
        });
        if (res.status >= 200 && res.status < 300) sentCount++;
        else errors.push({ phoneNumber: to, error: twilioError(res) });
      } catch (err) {
        errors.push({ phoneNumber: to, error: errorText(err) });
      }
    }
    const failedCount = errors.length;
    const details = { phoneNumbers, sentCount, failedCount, ...(errors.length ? { errors } : {}) };
    if (failedCount === 0) return { success: true, message: `SMS sent to ${sentCount} recipient(s)`, details };
    return { success: false, message: `SMS failed for ${failedCount} of ${phoneNumbers.length} recipient(s)`, details };
  }
}

/** Twilio's error body is `{code, message, more_info, status}`. */
function twilioError(res: OutboundResponse): string {
  try {
    const body = JSON.parse(res.body) as { message?: unknown; code?: unknown };
    if (typeof body.message === 'string') return `HTTP ${res.status}: ${body.message}${typeof body.code === 'number' || typeof body.code === 'string' ? ` (${body.code})` : ''}`;
  } catch {
    // not JSON
  }
  return `HTTP ${res.status}`;
}
