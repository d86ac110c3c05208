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

/**
 * The command closest to what was typed. oclif joins every word before the first flag into the id
 * (`orgs gte 3b9e` → `orgs:gte:3b9e`), so commands that take arguments are also compared with the same number
 * of leading words. Undefined when nothing is close enough to be a plausible typo.
 */
export function closestCommand(typed: string, commands: readonly KnownCommand[]): string | undefined {
  const words = typed.split(':').filter(Boolean);
  let best: { id: string; distance: number } | undefined;
  for (const command of commands) {
    const parts = command.id.split(':');
    const candidates = [words.join(':')];
    if (command.takesArgs && words.length > parts.length) candidates.push(words.slice(0, parts.length).join(':'));
    for (const candidate of candidates) {
      const distance = editDistance(candidate, command.id);
      if (!best || distance < best.distance) best = { id: command.id, distance };
    }
  }
  if (!best) return undefined;
  const allowed = Math.max(2, Math.floor(best.id.length / 3));
  return best.distance <= allowed ? best.id : undefined;
}
