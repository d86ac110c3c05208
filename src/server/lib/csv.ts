import { csvFormatRow } from 'd3-dsv';
import { csvCell } from '../../lib/csv-cell.js';

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
