import { describe, expect, it } from 'vitest';
import { csvCell, neutraliseFormula } from '../../src/lib/csv-cell.js';
import { csvFields, csvRecord } from '../../src/server/lib/csv.js';

describe('server CSV cells (03§4.4 export, 04 "Audit export"): RFC 4180 through d3-dsv, formulas neutralised', () => {
  it('03§4.4 every character a spreadsheet may start a formula with gets an apostrophe; other text is kept', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r'])
      expect(neutraliseFormula(`${start}SUM(A1)`)).toBe(`'${start}SUM(A1)`);
    for (const text of ['', 'plain', ' =not at the start', "'quoted", '1-2'])
      expect(neutraliseFormula(text)).toBe(text);
  });

  it('03§4.4 null and undefined are empty, numbers and booleans as written, objects as neutralised JSON', () => {
    expect([null, undefined, 0, -1.5, true, false].map(csvCell)).toEqual(['', '', '0', '-1.5', 'true', 'false']);
    expect(csvCell({ a: 1 })).toBe('{"a":1}');
    expect(csvCell(['-x'])).toBe('["-x"]');
    expect(csvCell('-1')).toBe("'-1");
  });

  it('03§4.4 quoting: a cell with a quote, comma or line break is quoted, quotes doubled; a record ends with \\n', () => {
    expect(csvFields(['a', 'b,c', 'say "hi"', 'two\nlines', 'cr\rhere', null])).toBe(
      'a,"b,c","say ""hi""","two\nlines","cr\rhere",',
    );
    expect(csvRecord(['=1+1', { k: 'v,w' }])).toBe(`'=1+1,"{""k"":""v,w""}"\n`);
  });
});
