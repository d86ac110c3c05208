import { describe, expect, it } from 'vitest';
import { stableStringify } from '../../src/server/lib/stable-json.js';

/** What audit checksums have always covered (03 §2.6): JSON.stringify of the value with every object's keys
 * sorted by code unit. Rows written before lib/stable-json.ts used safe-stable-stringify must still verify: integer-like keys
 * come first in numeric order, as in any object the replacer rebuilt. */
function reference(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** A seeded generator (mulberry32): the same cases on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ATOMS: unknown[] = [null, undefined, true, false, 0, -0, 1.5, -3e21, NaN, Infinity, '', 'plain', 'quote " and \\ and \n', '\ud800 lone', '😀 é ß', '\u2028\u2029', '</script>'];
const KEYS = ['a', 'B', 'b', '10', '9', '_', 'é', 'Z', 'aa', '', '__proto__x', 'id', 'checksum'];

function value(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth <= 0 || pick < 0.5) return ATOMS[Math.floor(next() * ATOMS.length)];
  if (pick < 0.75) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth - 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 5); i > 0; i--) out[KEYS[Math.floor(next() * KEYS.length)] ?? 'k'] = value(next, depth - 1);
  return out;
}

describe('stable JSON for checksums (lib/stable-json.ts)', () => {
  it('03§2.6 the text is that of JSON.stringify with sorted keys, for 2000 seeded values (unicode, lone surrogates, undefined, numbers)', () => {
    const next = random(20261125);
    for (let i = 0; i < 2000; i++) {
      const v = { details: value(next, 4), at: new Date(Math.floor(next() * 2e12)), seq: i };
      expect(stableStringify(v)).toBe(reference(v));
    }
  });

  it('03§2.6 the same value with its keys in another order gives the same text; a cycle throws', () => {
    expect(stableStringify({ b: 1, a: { d: [1, { z: 0, y: 1 }], c: null } })).toBe(
      stableStringify({ a: { c: null, d: [1, { y: 1, z: 0 }] }, b: 1 }),
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => stableStringify(cyclic)).toThrow(TypeError);
  });
});
