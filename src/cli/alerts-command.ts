import type { Interfaces } from '@oclif/core';
import { ApiCommand, mutationFlags } from './api-command.js';
import { Args } from './flags.js';
import { UsageError } from './prompts.js';
import type { CommandClass } from './base-command.js';
import type { Page } from '../client/paginate.js';
import type { CallResult } from '../client/contract-client.js';
import type { EndpointDef } from '../contract/endpoint.js';
import type { ClientEndpoint } from '../contract/projection.js';
import { requestOf, withText, type CommandText } from './resource-commands.js';

/** What `svc alerts …` commands share: columns, the flat list envelope of /alert-templates, several ids. */
export const ALERT_COLUMNS = ['id', 'status', 'severity', 'title', 'deviceHostname', 'ruleName', 'orgName', 'triggeredAt'];
export const TEMPLATE_COLUMNS = ['id', 'name', 'category', 'severity', 'defaultCooldownMinutes', 'builtIn', 'orgId'];
export const RULE_COLUMNS = ['id', 'name', 'templateName', 'severity', 'enabled', 'targetType', 'targetId', 'cooldownMinutes', 'orgId'];
export const LINK_COLUMNS = ['id', 'alertId', 'relatedAlertId', 'reason', 'confidence', 'createdAt'];
export const GROUP_COLUMNS = ['id', 'title', 'correlationScore', 'rootCauseHint', 'createdAt'];

/** `{data, page, limit, total}` (05 wire notes: /alert-templates lists) as the CLI's pages. */
export function flatPage<I>(answer: { data: I[]; page: number; limit: number; total: number }): Page<I> {
  return { data: answer.data, pagination: { page: answer.page, limit: answer.limit, total: answer.total } };
}

/** The ids argument of ack, resolve and suppress: one id, or several (which use POST /alerts/bulk). */
export const idsArg = { id: Args.string({ required: true, description: 'Alert id (several ids: one bulk request)' }) };

export abstract class AlertTransitionCommand<T extends CommandClass> extends ApiCommand<T> {
  static override strict = false;
  static override flags = { ...mutationFlags };

  /** Every id given (the first is the declared argument, the rest are extra positional arguments). */
  protected ids(): string[] {
    const ids = [String((this.args as { id?: unknown }).id), ...this.extraArgs];
    if (ids.length > 100) throw new UsageError('At most 100 alert ids at once');
    return [...new Set(ids)];
  }
}

/** `svc alerts resolve|suppress <id…>` with the one option of the transition (`--note`, `--until`): one id calls
 * the alert's own endpoint, several send one `bulk` request of `action`; the option goes with either when given. */
export function alertTransitionCommand<E extends EndpointDef, B extends EndpointDef, F extends Interfaces.FlagInput>(
  one: ClientEndpoint<E>,
  bulk: ClientEndpoint<B>,
  action: 'resolve' | 'suppress',
  option: F,
  text: CommandText,
) {
  const flags = { ...option, ...mutationFlags };
  class Transition extends AlertTransitionCommand<{ args: typeof idsArg; flags: typeof flags }> {
    static override args = idsArg;
    static override flags = flags;
    static override columns = ALERT_COLUMNS;

    async run(): Promise<CallResult<E> | CallResult<B>> {
      const ids = this.ids();
      const values = this.flags as Record<string, unknown>;
      const given = Object.fromEntries(Object.keys(option).flatMap((name) => (values[name] !== undefined ? [[name, values[name]]] : [])));
      if (ids.length > 1) return this.call(bulk, requestOf<B>({ body: { action, alertIds: ids, ...given } }));
      return this.call(one, requestOf<E>({ params: { id: this.args.id }, body: given }));
    }
  }
  return withText(Transition, text);
}
