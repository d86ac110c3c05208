import { ApiCommand, mutationFlags } from './api-command.js';
import { Args } from './flags.js';
import { UsageError } from './prompts.js';
import { parseArgv, type ArgDef, type FlagDef } from './runtime/parse.js';
import type { CommandClass } from './base-command.js';
import type { Page } from '../client/paginate.js';

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
  protected async ids(): Promise<string[]> {
    const ctor = this.ctor;
    const { args, argv } = await parseArgv(this.argv, {
      flags: { ...ctor.baseFlags, ...ctor.flags } as Record<string, FlagDef>,
      args: ctor.args as Record<string, ArgDef>,
      strict: false,
    });
    const ids = [String(args.id), ...argv];
    if (ids.length > 100) throw new UsageError('At most 100 alert ids at once');
    return [...new Set(ids)];
  }
}
