// The one rule for a CSV cell, shared by the server's exports (src/server/lib/csv.ts) and the CLI's `-o csv`
// (src/cli/output.ts): a file made by either opens the same way in a spreadsheet. It imports nothing, so either
// side may use it.

/** = + - @, tab, CR and LF: what a spreadsheet may run as a formula (or strip before doing so). */
const FORMULA_START = new Set([0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d, 0x0a]);

/** Cells that a spreadsheet would run as a formula get a leading apostrophe (OWASP "CSV injection"). */
export function neutraliseFormula(value: string): string {
  return FORMULA_START.has(value.charCodeAt(0)) ? `'${value}` : value;
}

/** The text of a cell: null empty, numbers and booleans as written, a date in ISO 8601, an object as its JSON,
 * text neutralised. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return neutraliseFormula(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return neutraliseFormula(JSON.stringify(value) ?? '');
}
