import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { OUTPUT_FORMATS, createRowWriter, render } from '../../src/cli/output.js';
import type { RenderOptions } from '../../src/cli/output.js';
import { UsageError } from '../../src/cli/prompts.js';
import { csvCell } from '../../src/lib/csv-cell.js';

const ANSI = '\u001b[';

const partners = [
  {
    id: 'p1',
    name: 'Acme, "Inc"',
    createdAt: '2024-05-01T12:34:56.789Z',
    settings: { timezone: 'UTC' },
    active: true,
    partner: { name: 'Parent' },
  },
  { id: 'p2', name: 'Line\nbreak', createdAt: null, settings: null, active: false, partner: { name: 'Other' } },
];

function streamed(opts: RenderOptions, pages: unknown[][]): string {
  let out = '';
  const writer = createRowWriter(opts, (chunk) => {
    out += chunk;
  });
  writer.header();
  for (const page of pages) writer.rows(page);
  writer.end();
  return out;
}

describe('render json', () => {
  it('CLI.md Output: prints the resource objects as they are, a list as an array', () => {
    expect(JSON.parse(render(partners, { format: 'json' }))).toEqual(partners);
    expect(JSON.parse(render(partners[0], { format: 'json' }))).toEqual(partners[0]);
    expect(render([], { format: 'json' })).toBe('[]\n');
    expect(render(partners, { format: 'json' })).toBe(`${JSON.stringify(partners, null, 2)}\n`);
  });

  it('projects to the columns when asked, dot paths resolved', () => {
    expect(JSON.parse(render(partners, { format: 'json', columns: ['id', 'partner.name'] }))).toEqual([
      { id: 'p1', 'partner.name': 'Parent' },
      { id: 'p2', 'partner.name': 'Other' },
    ]);
  });

  it('prints nothing for undefined', () => {
    expect(render(undefined, { format: 'json' })).toBe('');
  });
});

describe('render jsonl', () => {
  it('prints one compact object per line', () => {
    const lines = render(partners, { format: 'jsonl' }).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(lines.slice(0, 2).map((line): unknown => JSON.parse(line))).toEqual(partners);
  });

  it('prints a single object as one line and honours columns', () => {
    expect(render({ id: 'x', nested: { a: 1 } }, { format: 'jsonl' })).toBe('{"id":"x","nested":{"a":1}}\n');
    expect(render(partners, { format: 'jsonl', columns: ['id'] })).toBe('{"id":"p1"}\n{"id":"p2"}\n');
  });
});

describe('render csv', () => {
  it('escapes per RFC 4180, JSON-encodes nested values, leaves null empty, uses \\n', () => {
    const out = render(partners, { format: 'csv' });
    expect(out).toBe(
      'id,name,createdAt,settings,active,partner\n' +
        'p1,"Acme, ""Inc""",2024-05-01T12:34:56.789Z,"{""timezone"":""UTC""}",true,"{""name"":""Parent""}"\n' +
        'p2,"Line\nbreak",,,false,"{""name"":""Other""}"\n',
    );
    expect(out).not.toContain('\r');
  });

  it('picks and orders columns, resolves dot paths, drops the header with noHeaders', () => {
    expect(render(partners, { format: 'csv', columns: ['partner.name', 'id'] })).toBe(
      'partner.name,id\nParent,p1\nOther,p2\n',
    );
    expect(render(partners, { format: 'csv', columns: ['id'], noHeaders: true })).toBe('p1\np2\n');
  });

  it('renders a single object as one row', () => {
    expect(render({ id: 'k', total: 3 }, { format: 'csv' })).toBe('id,total\nk,3\n');
  });

  it('writes the header once across streamed pages', () => {
    const out = streamed({ format: 'csv' }, [
      [{ id: 'a', n: 1 }],
      [],
      [
        { id: 'b', n: 2 },
        { id: 'c', n: 3 },
      ],
    ]);
    expect(out).toBe('id,n\na,1\nb,2\nc,3\n');
  });

  it('streams without a header when noHeaders, and writes a header-only file for an empty export', () => {
    expect(streamed({ format: 'csv', noHeaders: true }, [[{ id: 'a' }], [{ id: 'b' }]])).toBe('a\nb\n');
    expect(streamed({ format: 'csv', columns: ['id', 'at'] }, [])).toBe('id,at\n');
    expect(streamed({ format: 'csv' }, [])).toBe('');
  });

  it('issue 9 item 11 (03§4.4): formula cells are neutralised by the rule of the server\'s exports, streamed or not', () => {
    const rows = [{ name: '=HYPERLINK("http://x","y")', note: '@SUM(A1)', n: -5, tags: ['-x'] }];
    const expected = `name,note,n,tags\n"'=HYPERLINK(""http://x"",""y"")",'@SUM(A1),-5,"[""-x""]"\n`;
    expect(render(rows, { format: 'csv' })).toBe(expected);
    expect(streamed({ format: 'csv' }, [rows])).toBe(expected);
    const serverCell = csvCell('=HYPERLINK("http://x","y")');
    expect(render(rows, { format: 'csv', columns: ['name'], noHeaders: true })).toBe(`"${serverCell.replaceAll('"', '""')}"\n`);
  });
});

describe('--columns', () => {
  it('issue 9 item 13: a column that is a field of no row is a usage error naming the valid columns', () => {
    for (const format of ['table', 'json', 'csv', 'jsonl', 'yaml'] as const) {
      expect(() => render(partners, { format, columns: ['id', 'nosuch'], userColumns: true })).toThrow(
        'Unknown column "nosuch" for --columns; valid columns: id, name, createdAt, settings, active, partner',
      );
    }
    expect(() => streamed({ format: 'csv', columns: ['nosuch'], userColumns: true }, [partners])).toThrow(UsageError);
    // Dot paths into a field, and fields a row leaves null, are columns; defaults of a command are not checked.
    expect(render(partners, { format: 'csv', columns: ['partner.name', 'settings'], userColumns: true })).toContain('partner.name,settings');
    expect(render(partners, { format: 'csv', columns: ['nosuch'] })).toBe('nosuch\n\n\n');
  });
});

describe('render yaml', () => {
  it('round-trips through a YAML parser', () => {
    expect(parseYaml(render(partners, { format: 'yaml' }))).toEqual(partners);
    expect(render({ id: 'x' }, { format: 'yaml' })).toBe('id: x\n');
  });
});

describe('render table', () => {
  it('shows the scalar keys of the rows by default, shortening timestamps, no ANSI without colour', () => {
    const out = render(partners, { format: 'table', color: false });
    expect(out).not.toContain(ANSI);
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]?.split(/\s+/)).toEqual(['id', 'name', 'createdAt', 'active']);
    expect(lines[1]).toMatch(/^p1\s+Acme, "Inc"\s+2024-05-01 12:34\s+true$/);
    expect(lines[2]).toMatch(/^p2\s+Line break\s+false$/);
  });

  it('includes nested values only when named, JSON-encoded and truncated', () => {
    const long = { id: 'x', settings: { description: 'a'.repeat(100) } };
    const out = render([long], { format: 'table', columns: ['id', 'settings', 'settings.description'] });
    const row = out.split('\n')[1] ?? '';
    expect(row).toContain('{"description":"aaa');
    expect(row).toContain('…');
    expect(row).toContain('a'.repeat(100));
  });

  it('drops the header row with noHeaders', () => {
    expect(render(partners, { format: 'table', columns: ['id'], noHeaders: true })).toBe('p1\np2\n');
  });

  it('renders a single object as a key/value table', () => {
    const out = render({ id: 'u1', email: 'a@b.c', roles: ['admin'] }, { format: 'table' });
    expect(out.split('\n').map((l) => l.split(/\s{2,}/))).toEqual([
      ['id', 'u1'],
      ['email', 'a@b.c'],
      ['roles', '["admin"]'],
      [''],
    ]);
  });

  it('colours the header only when colour is on', () => {
    expect(render(partners, { format: 'table', color: true })).toContain(ANSI);
  });

  it('prints nothing for an empty list', () => {
    expect(render([], { format: 'table' })).toBe('');
  });

  it('buffers streamed pages and prints one table at the end', () => {
    const chunks: string[] = [];
    const writer = createRowWriter({ format: 'table' }, (c) => chunks.push(c));
    writer.rows([{ id: 'a' }]);
    writer.rows([{ id: 'b' }]);
    expect(chunks).toEqual([]);
    writer.end();
    expect(chunks).toEqual(['id\na\nb\n']);
  });
});

describe('quiet', () => {
  it('prints ids one per line in any format', () => {
    for (const format of OUTPUT_FORMATS) {
      expect(render(partners, { format, quiet: true })).toBe('p1\np2\n');
    }
  });

  it('prints the named field of an object, strings as themselves, and spreads arrays', () => {
    expect(render({ id: 'k1', key: 'sk_secret' }, { format: 'json', quiet: true, quietField: 'key' })).toBe(
      'sk_secret\n',
    );
    expect(render(['a', 'b'], { format: 'table', quiet: true })).toBe('a\nb\n');
    expect(render({ codes: ['c1', 'c2'] }, { format: 'json', quiet: true, quietField: 'codes' })).toBe('c1\nc2\n');
    expect(render({ partner: { id: 'p9' } }, { format: 'json', quiet: true, quietField: 'partner.id' })).toBe('p9\n');
  });
});

describe('createRowWriter json and jsonl', () => {
  it('json collects every page into one array', () => {
    const out = streamed({ format: 'json' }, [[{ id: 'a' }], [{ id: 'b' }]]);
    expect(JSON.parse(out)).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(streamed({ format: 'json' }, [])).toBe('[]\n');
  });

  it('jsonl writes each page as it arrives', () => {
    const chunks: string[] = [];
    const writer = createRowWriter({ format: 'jsonl' }, (c) => chunks.push(c));
    writer.rows([{ id: 'a' }, { id: 'b' }]);
    expect(chunks).toEqual(['{"id":"a"}\n{"id":"b"}\n']);
    writer.rows([{ id: 'c' }]);
    writer.end();
    expect(chunks.join('')).toBe('{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n');
  });
});
