import type { PamVerdict } from '../../../contract/pam.js';
import { badRequest } from '../../errors.js';
import { IDENTIFYING_CRITERIA, NEGATE_FIELD, ruleKind, type RuleCriteria } from './engine.js';
import { TOOL_RISK_TIERS } from './tool-risk-tiers.js';

/** A rule as it will be stored (create body with defaults, or the current row merged with a PATCH). */
export interface RuleShape extends RuleCriteria {
  verdict: PamVerdict;
}

const invalid = (message: string, code: string, extra?: Record<string, unknown>) =>
  badRequest(message, code, extra);

function tiersOf(tool: string): readonly number[] | undefined {
  const key = tool.toLowerCase();
  return Object.hasOwn(TOOL_RISK_TIERS, key) ? TOOL_RISK_TIERS[key] : undefined;
}

/**
 * The risk tiers a rule's tool selector can reach (04 wire notes "PAM"): a known tool's own tiers; without a
 * tool name the union over all tools; with a negated tool name the union over every other tool. null when
 * the selector names a tool the catalogue does not know (unknown tools fail open).
 */
export function reachableRiskTiers(toolName: string | null, negated: boolean): number[] | null {
  const union = (names: string[]) =>
    [...new Set(names.flatMap((name) => [...(TOOL_RISK_TIERS[name] ?? [])]))].sort((a, b) => a - b);
  if (toolName === null) return union(Object.keys(TOOL_RISK_TIERS));
  const own = tiersOf(toolName);
  if (!own) return null;
  if (negated) return union(Object.keys(TOOL_RISK_TIERS).filter((name) => name !== toolName.toLowerCase()));
  return [...own].sort((a, b) => a - b);
}

/**
 * The rule-shape rules of 01 §4.9 "Validation", checked on create and on the merged rule of every PATCH:
 * 400 with a machine code on the first one broken.
 */
export function validateRuleShape(rule: RuleShape): void {
  // At least one identifying criterion; user and directory group count (a rule "everything alice runs"),
  // a time window alone does not.
  if (!IDENTIFYING_CRITERIA.some((key) => rule[key] !== null)) {
    throw invalid(
      'A rule needs at least one identifying criterion (signer, signer group, thumbprint, hash, path, parent image, command line, user, directory group, tool name or risk tier); a time window alone is not enough',
      'PAM_RULE_NO_CRITERIA',
    );
  }
  const executable = ruleKind({ ...rule, matchToolName: null, matchRiskTier: null }) === 'executable';
  const tool = rule.matchToolName !== null || rule.matchRiskTier !== null;
  if (executable && tool) {
    throw invalid(
      'Executable criteria (signer, signer group, thumbprint, hash, path, parent image, command line) and tool-action criteria (tool name, risk tier) cannot be mixed in one rule',
      'PAM_RULE_MIXED_CRITERIA',
    );
  }
  if (rule.matchSigner !== null && rule.matchSignerGroupId !== null) {
    throw invalid('matchSigner and matchSignerGroupId are exclusive', 'PAM_RULE_SIGNER_CONFLICT');
  }
  if (rule.matchSignerThumbprint !== null && rule.matchSignerGroupId !== null) {
    throw invalid('matchSignerThumbprint and matchSignerGroupId are exclusive', 'PAM_RULE_SIGNER_CONFLICT');
  }
  if (tool && rule.verdict === 'ignore') {
    throw invalid('The verdict ignore is not valid for tool-action rules', 'PAM_RULE_IGNORE_TOOL_ACTION');
  }
  for (const key of rule.matchNegate ?? []) {
    if (rule[NEGATE_FIELD[key]] === null) {
      throw invalid(
        `matchNegate: "${key}" negates a criterion the rule does not set (${NEGATE_FIELD[key]})`,
        'PAM_RULE_NEGATE_INVALID',
      );
    }
  }
  if (rule.matchRiskTier !== null) {
    const negate = new Set(rule.matchNegate ?? []);
    const reachable = reachableRiskTiers(rule.matchToolName, negate.has('toolName'));
    if (reachable !== null) {
      const tier = rule.matchRiskTier;
      const ok = negate.has('riskTier') ? reachable.some((t) => t !== tier) : reachable.includes(tier);
      if (!ok) {
        const selector =
          rule.matchToolName === null
            ? 'any tool'
            : negate.has('toolName')
              ? `any tool but ${rule.matchToolName}`
              : rule.matchToolName;
        throw invalid(`matchRiskTier ${tier} is not reachable by ${selector}`, 'pam_rule_risk_tier_unreachable', {
          validTiers: reachable,
        });
      }
    }
  }
}
