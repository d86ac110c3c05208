/** Optimal string alignment distance: Levenshtein plus adjacent transpositions (`gte` → `get` is one edit). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}

export interface KnownCommand {
  id: string;
  /** Takes positional arguments: then words after its id may be those arguments, not part of the id. */
  takesArgs: boolean;
}

/** Whether a candidate this many edits away from what was typed is a plausible typo of it. */
const plausible = (distance: number, candidate: string) => distance <= Math.max(2, Math.floor(candidate.length / 3));

/**
 * The command closest to what was typed. oclif joins every word before the first flag into the id
 * (`orgs gte 3b9e` → `orgs:gte:3b9e`), so commands that take arguments are also compared with the same number
 * of leading words; and a command typed under a topic it is not in (`orgs sites create`) is compared without its
 * leading words too. Undefined when nothing is close enough to be a plausible typo.
 */
export function closestCommand(typed: string, commands: readonly KnownCommand[]): string | undefined {
  const words = typed.split(':').filter(Boolean);
  let best: { id: string; distance: number } | undefined;
  for (const command of commands) {
    const parts = command.id.split(':');
    // Without and with its first word: an extra leading word costs one edit, so a plain typo still wins.
    for (const dropped of words.length > parts.length ? [0, 1] : [0]) {
      const kept = words.slice(dropped);
      const candidates = [kept.join(':')];
      if (command.takesArgs && kept.length > parts.length) candidates.push(kept.slice(0, parts.length).join(':'));
      for (const candidate of candidates) {
        const distance = editDistance(candidate, command.id) + dropped;
        if (!best || distance < best.distance) best = { id: command.id, distance };
      }
    }
  }
  return best && plausible(best.distance, best.id) ? best.id : undefined;
}

/**
 * The flag an unknown one was probably meant to be: the one flag of which what was typed is a whole part
 * (`--url` → `base-url`, `--org=…` → `org-id`), else a typo of one (`--ouptut` → `output`), held to one edit per
 * three characters (`--url` is no typo of `--all`). NAMES are the command's long flag names; undefined when none
 * is close.
 */
export function closestFlag(typed: string, names: readonly string[]): string | undefined {
  const word = typed.replace(/^--?/, '').replace(/=.*$/s, '');
  if (word.length >= 3) {
    const parts = names.filter((name) => name.startsWith(`${word}-`) || name.endsWith(`-${word}`));
    if (parts.length === 1) return parts[0];
  }
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(word, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(1, Math.floor(best.name.length / 3)) ? best.name : undefined;
}
