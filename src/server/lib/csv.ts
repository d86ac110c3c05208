import { csvFormatRow } from 'd3-dsv';

/** = + - @, tab and CR: what a spreadsheet may run as a formula (or strip before doing so). */
const FORMULA_START = new Set([0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d]);

/** Cells that a spreadsheet would run as a formula get a leading apostrophe (OWASP "CSV injection"). */
export function neutraliseFormula(value: string): string {
  return FORMULA_START.has(value.charCodeAt(0)) ? `'${value}` : value;
}

/** The text of an exported cell: null empty, an object as its JSON, text neutralised. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return neutraliseFormula(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return neutraliseFormula(JSON.stringify(value) ?? '');
}

/**
 * The server's CSV exports are RFC 4180 through d3-dsv (a cell is quoted when it holds a quote, a comma or a
 * line break), `\n` line ends. Fields only: records of several parts may be joined with a comma.
 */
export function csvFields(cells: readonly unknown[]): string {
  return csvFormatRow(cells.map(csvCell));
}

/** One record with its line end. */
export function csvRecord(cells: readonly unknown[]): string {
  return `${csvFields(cells)}\n`;
}
