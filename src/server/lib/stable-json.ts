import { configure } from 'safe-stable-stringify';

/** An array index as JavaScript orders own keys: the canonical decimal form of an integer below 2³² − 1. */
function isIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 48 && first <= 57 && /^(?:0|[1-9]\d*)$/.test(key) && Number(key) < 4294967295;
}

/**
 * The key order checksums have always used: the sorted keys of an object rebuilt as a new object, which puts
 * array-index keys first in numeric order (as every JavaScript object does), then the rest by UTF-16 code unit.
 */
function keyOrder(a: string, b: string): number {
  const ai = isIndex(a);
  const bi = isIndex(b);
  if (ai || bi) return ai && bi ? Number(a) - Number(b) : ai ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

const sortedStringify = configure({ deterministic: keyOrder, circularValue: TypeError });

/** JSON with object keys sorted at every depth: the same value always gives the same text (checksums). For JSON
 * data the text is exactly the one of the replacer this replaced (test/server/stable-json.test.ts), so rows
 * written before still verify; safe-stable-stringify makes it without an object per level. */
export function stableStringify(value: unknown): string {
  return sortedStringify(value) ?? 'null';
}
