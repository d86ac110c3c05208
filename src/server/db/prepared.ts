import { Column, eq, getTableColumns, getTableName, is, SQL, sql, type InferInsertModel, type InferSelectModel, type SQLWrapper } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import type { SQLiteColumn, SQLiteSelect, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from './connection.js';

/**
 * Prepared statements, once per database (README, Architecture: "Queries are declared once").
 *
 * drizzle builds the SQL text of a query each time one is run unless it was made with `.prepare()`, and the
 * building (walking the query's tree, naming columns, mapping values) costs more than SQLite running a simple
 * statement. So a module declares the queries of its hot paths once, with `sql.placeholder(name)` for what
 * varies, and this keeps what `.prepare()` gave per database (a WeakMap by `Db`: tests and tools open several in
 * one process; a closed database's statements go with it):
 *
 *   const queries = preparedQueries((db) => ({
 *     ofOrg: db.select().from(sites).where(eq(sites.orgId, sql.placeholder('orgId'))).prepare(),
 *   }));
 *   queries(this.db).ofOrg.all({ orgId });
 *
 * One row by its id needs no declaration: `rowById(db, table, id)` keeps one statement per table.
 *
 * Writes whose columns vary with the request (a PATCH sets only what it names, an insert leaves defaults out)
 * go through `insertRow` and `updateRow`, which keep one statement per table and set of columns and fill the
 * per-row defaults (`$defaultFn`: ids, timestamps) on each call, where a prepared drizzle insert would have
 * fixed them once.
 */
export function preparedQueries<Q>(build: (db: Db) => Q): (db: Db) => Q {
  const byDb = new WeakMap<Db, Q>();
  return (db) => {
    let queries = byDb.get(db);
    if (queries === undefined) byDb.set(db, (queries = build(db)));
    return queries;
  };
}

/** How many shapes of one query `preparedShapes` keeps per database; the oldest goes first. */
export const SHAPES_KEPT = 64;

/**
 * Prepared statements of a query whose SQL varies with the request in a few ways only (which optional filters
 * it has, whether a caller's reach is a list or everything): `build` makes the statement of one shape, named by a
 * string the caller derives from the request (never from its values: those go in as placeholders), once per
 * database and shape. Lists of ids go in as one JSON array placeholder (`inJson`).
 *
 *   const listOf = preparedShapes((db, shape: string) => db.select()…where(and(...shapeConditions(shape, {…})))….prepare());
 *   listOf(this.db, shapeOf({ o: ids !== null, s: status })).all({ orgIds: JSON.stringify(ids), status });
 */
export function preparedShapes<Q>(build: (db: Db, shape: string) => Q): (db: Db, shape: string) => Q {
  const byDb = new WeakMap<Db, Map<string, Q>>();
  return (db, shape) => {
    let shapes = byDb.get(db);
    if (shapes === undefined) byDb.set(db, (shapes = new Map<string, Q>()));
    let query = shapes.get(shape);
    if (query === undefined) {
      if (shapes.size >= SHAPES_KEPT) shapes.delete(shapes.keys().next().value as string);
      shapes.set(shape, (query = build(db, shape)));
    }
    return query;
  };
}

/**
 * The shape of a request (preparedShapes), on the caller's side: the letters, in the order given, whose value the
 * request has (one neither undefined, null, '' nor false; where a filter's test is another, pass it as a boolean).
 * Keys are single letters; a shape with other parts (a reach's letters, a `:`) adds them around this.
 *
 *   const shape = reach.shape + shapeOf({ s: query.status, d: query.deviceId, e: query.enabled !== undefined });
 */
export function shapeOf(present: Record<string, unknown>): string {
  let shape = '';
  for (const [letter, value] of Object.entries(present)) {
    if (value !== undefined && value !== null && value !== '' && value !== false) shape += letter;
  }
  return shape;
}

/**
 * The shape's conditions (preparedShapes), on the builder's side: of the conditions by letter, in the order given,
 * those whose letter the shape has (each built only then), to spread into `and(…)` among any that every shape has.
 *
 *   and(eq(t.orgId, sql.placeholder('orgId')), ...shapeConditions(shape, {
 *     s: () => eq(t.status, sql.placeholder('status')),
 *     d: () => eq(t.deviceId, sql.placeholder('deviceId')),
 *   }))
 */
export function shapeConditions(shape: string, conditions: Record<string, () => SQL | undefined>): (SQL | undefined)[] {
  return Object.entries(conditions).flatMap(([letter, condition]) => (shape.includes(letter) ? [condition()] : []));
}

/** `column IN (the JSON array given as placeholder name)`: a list of any length in one prepared statement. With
 * `values`, the array `values[name]` is bound in place of the placeholder: the same condition for a statement built
 * per call (one whose other conditions vary too much to prepare). */
export function inJson(column: SQLiteColumn | SQL, name: string, values?: Readonly<Record<string, unknown>>): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${values ? sql`${values[name]}` : sql.placeholder(name)}))`;
}

/** Whole rows of a table, prepared once: `get` and `all` take the placeholders' values. */
export interface RowQuery<T extends SQLiteTable> {
  get(values: Record<string, unknown>): InferSelectModel<T> | undefined;
  all(values: Record<string, unknown>): InferSelectModel<T>[];
}

/** What a `rowQuery` may add after its WHERE: the order, and `paged` for `LIMIT` and `OFFSET` placeholders named
 * `limit` and `offset` (a list route's page, lib/paging.ts). */
export interface RowQueryShape {
  orderBy?: (SQL | SQLWrapper)[];
  paged?: boolean;
}

/** How a table's row read as an array (its columns in `columnEntries` order) becomes the object drizzle would
 * return: each non-null value through its column's mapFromDriverValue (a JSON column parsed, a boolean from 0/1).
 * Made once per table. */
interface RowMapper {
  /** The table's columns by property name, to select in this order. */
  fields: Record<string, SQLiteColumn>;
  toRow(raw: unknown[]): Record<string, unknown>;
}

const mappers = new WeakMap<SQLiteTable, RowMapper>();

function rowMapper(table: SQLiteTable): RowMapper {
  let mapper = mappers.get(table);
  if (mapper === undefined) {
    const columns = columnEntries(table);
    const names = columns.map(([name]) => name);
    // A column that keeps the driver's value (plain text, a plain integer) is not called per row.
    const decoders = columns.map(([, column]) =>
      column.mapFromDriverValue === Column.prototype.mapFromDriverValue ? null : (value: unknown) => column.mapFromDriverValue(value),
    );
    mapper = {
      fields: Object.fromEntries(columns),
      toRow(raw) {
        const row: Record<string, unknown> = {};
        for (let i = 0; i < names.length; i++) {
          const value = raw[i];
          const decode = decoders[i];
          row[names[i] as string] = value === null || !decode ? value : decode(value);
        }
        return row;
      },
    };
    mappers.set(table, mapper);
  }
  return mapper;
}

/** Whole rows of a table read as arrays (better-sqlite3's raw mode) and mapped by the table's RowMapper (what
 * that saves against drizzle's own mapping: rowQuery). */
function readRows<T extends SQLiteTable>(stmt: Database.Statement, params: unknown[], mapper: RowMapper): InferSelectModel<T>[] {
  // The statement is shared by SQL text on this connection (db/connection.ts): its mode is set at each use.
  return (stmt.raw(true).all(params) as unknown[][]).map((raw) => mapper.toRow(raw) as InferSelectModel<T>);
}

/**
 * `db.select().from(table).where(where)` (ordered and paged as `shape` says) prepared once, its rows read as arrays
 * and mapped as drizzle maps them (RowMapper): an organization ~5.7 → ~4.6 µs, a page of 50 sites ~170 → ~114 µs
 * (micro-benchmarks), paid by the lookups most requests make (requireOrg, rowById) and by every page of a list
 * route (preparedPage) whose answer is not kept.
 */
export function rowQuery<T extends SQLiteTable>(db: Db, table: T, where: SQL | undefined, shape: RowQueryShape = {}): RowQuery<T> {
  const mapper = rowMapper(table);
  let select = db
    .select(mapper.fields)
    .from(table as SQLiteTable)
    .where(where)
    .$dynamic();
  if (shape.orderBy) select = select.orderBy(...(shape.orderBy as SQL[]));
  if (shape.paged) select = select.limit(sql.placeholder('limit')).offset(sql.placeholder('offset'));
  const statement = rawStatement(db, select);
  if (statement.stmt.columns().length !== columnEntries(table).length) throw new Error(`rowQuery: ${getTableName(table)} is not selected whole`);
  return {
    get(values) {
      // Shared by SQL text, as readRows says: the mode is set at each use.
      const raw = statement.stmt.raw(true).get(statement.bind(values)) as unknown[] | undefined;
      return raw === undefined ? undefined : (mapper.toRow(raw) as InferSelectModel<T>);
    },
    all(values) {
      return readRows<T>(statement.stmt, statement.bind(values), mapper);
    },
  };
}

/**
 * Whole rows of a table by a query whose SQL varies with the request in ways too many to prepare each (a list
 * with many optional filters): `build` adds the WHERE, order and page to `select * from table`, drizzle builds its
 * SQL (the connection compiles each text once, db/connection.ts), and the rows are mapped as rowQuery's are.
 *
 *   selectRows(db, table, (q) => page(q.where(where).orderBy(...order), p));
 */
export function selectRows<T extends SQLiteTable>(
  db: Db,
  table: T,
  build: (query: SQLiteSelect) => { toSQL(): { sql: string; params: unknown[] } },
): InferSelectModel<T>[] {
  const mapper = rowMapper(table);
  const { sql: text, params } = build(db.select(mapper.fields).from(table as SQLiteTable).$dynamic()).toSQL();
  return readRows<T>(db.$client.prepare(text), params, mapper);
}

/** Each table's statement of `rowById`, per database (one per table: no eviction needed). */
const byIdStatements = new WeakMap<Db, Map<SQLiteTable, RowQuery<SQLiteTable>>>();

/**
 * The row of TABLE whose `id` is ID, through one prepared statement per table and database (rowQuery), where
 * `db.select().from(table).where(eq(table.id, id)).get()` builds the same SQL on every call. Run inside the
 * caller's transaction like any other statement of the connection.
 */
export function rowById<T extends SQLiteTable & { id: SQLiteColumn }>(db: Db, table: T, id: string): InferSelectModel<T> | undefined {
  let statements = byIdStatements.get(db);
  if (statements === undefined) byIdStatements.set(db, (statements = new Map<SQLiteTable, RowQuery<SQLiteTable>>()));
  let statement = statements.get(table);
  if (statement === undefined) {
    statement = rowQuery(db, table, eq(table.id, sql.placeholder('id')));
    statements.set(table, statement);
  }
  return statement.get({ id }) as InferSelectModel<T> | undefined;
}

/**
 * Deletes the row of TABLE whose `id` is ID through one prepared statement per table and database, where
 * `db.delete(table).where(eq(table.id, id)).run()` builds the same SQL on every call; how many rows went (0 or 1).
 */
export function deleteById<T extends SQLiteTable & { id: SQLiteColumn }>(db: Db, table: T, id: string): number {
  const stmt = keptStatement(db, `delete\0${getTableName(table)}`, () =>
    db.delete(table).where(eq(table.id, sql.placeholder('id'))).prepare(),
  );
  return stmt.run({ id }).changes;
}

/** How many write statements are kept per database (by table and set of columns); the oldest goes first. */
export const WRITE_STATEMENTS_KEPT = 256;

const writeStatements = new WeakMap<Db, Map<string, unknown>>();

function keptStatement<S>(db: Db, key: string, build: () => S): S {
  let kept = writeStatements.get(db);
  if (kept === undefined) writeStatements.set(db, (kept = new Map<string, unknown>()));
  let stmt = kept.get(key) as S | undefined;
  if (stmt === undefined) {
    if (kept.size >= WRITE_STATEMENTS_KEPT) kept.delete(kept.keys().next().value as string);
    kept.set(key, (stmt = build()));
  }
  return stmt;
}

/**
 * A drizzle-built query as better-sqlite3 runs it: its statement, and `bind`, which puts named values in the
 * order of the statement's `?`. For statements run where drizzle's own run adds more than SQLite does (the
 * mapping of a returned row; a column list walked per call): audited inserts, insertRow.
 */
export function rawStatement(db: Db, query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql: text, params } = query.toSQL();
  const stmt = db.$client.prepare(text);
  const order = params.map((p) => (p !== null && typeof p === 'object' && 'name' in p ? (p as { name: string }).name : undefined));
  const fixed = params.map((p, i) => (order[i] === undefined ? p : undefined));
  return {
    stmt,
    bind: (values: Record<string, unknown>) => order.map((name, i) => (name === undefined ? fixed[i] : values[name])),
  };
}

/**
 * A drizzle-built select of one column (of a text or integer column: the value is not mapped) as better-sqlite3
 * runs it, that column's value of the first row plucked: ~0.55 µs where drizzle's own prepared `get` (its
 * placeholders filled, its row mapped to an object) takes ~1.1-1.5 µs here. For the one-value lookups most writes
 * make (the partner of an organization, in an access check and in the audit entry).
 */
export function valueQuery<V>(db: Db, query: { toSQL(): { sql: string; params: unknown[] } }): { get(values: Record<string, unknown>): V | undefined } {
  const statement = rawStatement(db, query);
  if (statement.stmt.columns().length !== 1) throw new Error('valueQuery: the query must select one column');
  // Shared by SQL text on this connection (db/connection.ts): its mode is set at each use.
  return { get: (values) => statement.stmt.pluck(true).get(statement.bind(values)) as V | undefined };
}

/** A column's value as the driver takes it. Placeholders are bare (`sql\`${placeholder}\``), not drizzle's
 * column-bound parameters, because those encode a null too (a JSON column would store the text `null`). */
export function driverValue(column: SQLiteColumn, value: unknown): unknown {
  return value === null ? null : column.mapToDriverValue(value);
}

type Columns = Record<string, SQLiteColumn>;

const entriesOf = new WeakMap<SQLiteTable, [string, SQLiteColumn][]>();

/** A table's columns by property name, listed once per table (every insert and update walks them). */
function columnEntries(table: SQLiteTable): [string, SQLiteColumn][] {
  let entries = entriesOf.get(table);
  if (entries === undefined) entriesOf.set(table, (entries = Object.entries(getTableColumns(table) as Columns)));
  return entries;
}

function placeholders(names: readonly string[]): Record<string, SQL> {
  return Object.fromEntries(names.map((name) => [name, sql`${sql.placeholder(name)}`]));
}

/**
 * Inserts one row and returns it as stored, through one prepared statement per table that names every column.
 * A column the row leaves out takes its `$defaultFn` (run now), else its constant default, else null: what
 * drizzle's own insert does. A table with an SQL expression as a default cannot be written this way (throws).
 * The row comes back from the values written, each mapped back as drizzle maps a column read (a JSON column
 * parsed, a boolean from 0/1), not through `RETURNING`, which SQLite runs through a table of its own (an
 * insert cost about half again as much in a micro-benchmark), and drizzle's mapping of the returned row.
 */
export function insertRow<T extends SQLiteTable>(db: Db, table: T, row: InferInsertModel<T>): InferSelectModel<T> {
  const columns = columnEntries(table);
  const insert = keptStatement(db, `insert\0${getTableName(table)}`, () => {
    for (const [name, column] of columns) {
      if (is(column.default, SQL)) throw new Error(`insertRow: ${getTableName(table)}.${name} has an SQL default`);
    }
    return rawStatement(db, db.insert(table).values(placeholders(columns.map(([name]) => name)) as never));
  });
  const given = row as Record<string, unknown>;
  const values: Record<string, unknown> = {};
  const stored: Record<string, unknown> = {};
  for (const [name, column] of columns) {
    let value = given[name];
    if (value === undefined) value = column.defaultFn ? column.defaultFn() : (column.default ?? null);
    const driver = driverValue(column, value);
    values[name] = driver;
    stored[name] = driver === null ? null : column.mapFromDriverValue(driver);
  }
  insert.stmt.run(insert.bind(values));
  return stored as InferSelectModel<T>;
}

/**
 * Sets the given columns of a row and returns the row as stored (undefined when there is none); keys whose value
 * is undefined are left alone, as in drizzle's `.set()`. One prepared statement per table and set of columns (a
 * PATCH names few); a column with `$onUpdateFn` that the changes leave out takes it, run now.
 *
 * The row is named by its id, or given whole as read earlier in the same transaction (what a PATCH reads first to
 * check the caller may change it): then the row handed back is that one with the changes, each mapped back as
 * insertRow maps its values, and the statement has no `RETURNING`, which SQLite runs through a table of its own
 * (~3.5 µs of an update's ~7 in a micro-benchmark), nor the decoding of every column it returns. A row read
 * before the transaction began may be stale: name that one by its id.
 */
export function updateRow<T extends SQLiteTable & { id: SQLiteColumn }>(
  db: Db,
  table: T,
  target: string | (InferSelectModel<T> & { id: string }),
  changes: Partial<InferInsertModel<T>>,
): InferSelectModel<T> | undefined {
  const columns: Columns = getTableColumns(table);
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(changes as Record<string, unknown>)) {
    const column = columns[name];
    if (value !== undefined && column) values[name] = driverValue(column, value);
  }
  for (const [name, column] of columnEntries(table)) {
    if (column.onUpdateFn && !(name in values)) values[name] = driverValue(column, column.onUpdateFn());
  }
  const names = Object.keys(values).sort();
  if (names.length === 0) throw new Error(`updateRow: nothing to set on ${getTableName(table)}`);
  const key = `${getTableName(table)}\0${names.join(',')}`;
  // Built only when the statement is first prepared for this table and set of columns.
  const where = () => eq(table.id, sql.placeholder('\0id'));
  if (typeof target !== 'string') {
    const update = keptStatement(db, `set\0${key}`, () => rawStatement(db, db.update(table).set(placeholders(names) as never).where(where())));
    values['\0id'] = target.id;
    if (update.stmt.run(update.bind(values)).changes === 0) return undefined;
    const row: Record<string, unknown> = { ...target };
    for (const name of names) {
      const driver = values[name];
      row[name] = driver === null ? null : (columns[name] as SQLiteColumn).mapFromDriverValue(driver);
    }
    return row as InferSelectModel<T>;
  }
  const mapper = rowMapper(table);
  const update = keptStatement(db, `update\0${key}`, () =>
    rawStatement(db, db.update(table).set(placeholders(names) as never).where(where()).returning(mapper.fields)),
  );
  values['\0id'] = target;
  // The returned row read as an array and mapped as rowQuery's rows are (drizzle's own mapping of it: ~3 µs).
  const raw = update.stmt.raw(true).get(update.bind(values)) as unknown[] | undefined;
  return raw === undefined ? undefined : (mapper.toRow(raw) as InferSelectModel<T>);
}
