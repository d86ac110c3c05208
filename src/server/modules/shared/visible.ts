import { DomainError } from '../../errors.js';

/** The row when it exists and the caller may reach it, else the error `missing` makes (a 404): a row out of
 * the caller's reach answers as one that does not exist, so other tenants' ids are not disclosed. `reach`
 * throws a DomainError when the caller may not reach the row; any other error passes through. */
export function visibleOr404<T>(row: T | undefined, reach: (row: T) => unknown, missing: () => DomainError): T {
  if (!row) throw missing();
  try {
    reach(row);
  } catch (err) {
    if (err instanceof DomainError) throw missing();
    throw err;
  }
  return row;
}
