/** Cells that a spreadsheet would run as a formula (= + - @, and tab or CR that some readers strip) get a
 * leading apostrophe (OWASP "CSV injection"). */
export function neutraliseFormula(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}
