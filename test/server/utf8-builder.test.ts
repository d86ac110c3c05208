import { describe, expect, it } from 'vitest';
import { Utf8Builder } from '../../src/server/lib/utf8-builder.js';

describe('Utf8Builder (the bytes of an export page)', () => {
  it('appends UTF-8 exactly as Buffer.from would encode the whole text, across growth', () => {
    // One-, two-, three- and four-byte characters (a surrogate pair), so the growth lands inside multi-byte text.
    const pieces = ['id,name\n', 'Zoë,naïve\n', '€ 12,50\n', '😀 ok\n', 'x'.repeat(70_000), '\n'];
    const builder = new Utf8Builder();
    for (let round = 0; round < 40; round++) for (const piece of pieces) builder.append(piece);
    const expected = Buffer.from(Array.from({ length: 40 }, () => pieces.join('')).join(''), 'utf8');
    expect(builder.byteLength).toBe(expected.length);
    expect(builder.bytes().equals(expected)).toBe(true);
  });

  it('a lone surrogate is written as U+FFFD, as Buffer.from writes it', () => {
    const builder = new Utf8Builder();
    builder.append('a\ud800b');
    expect(builder.bytes().equals(Buffer.from('a\ud800b', 'utf8'))).toBe(true);
  });

  it('nothing appended is no bytes', () => {
    expect(new Utf8Builder().bytes().length).toBe(0);
  });
});
