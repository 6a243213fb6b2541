/**
 * Assertions for the store contract, on `node:assert/strict` (no test runner's `expect`), each
 * failure naming the contract clause it broke: "store contract, <area> › <clause>: <what>".
 */
import assert from "node:assert/strict";

type ErrorClass<E extends Error> = abstract new (...args: never[]) => E;

/** The assertion errors a clause already reported (named its clause): a nested check passes them on as they are. */
const reported = new WeakSet<Error>();

/** The assertions of one contract clause. Every failure message starts with the clause. */
export class Clause {
  constructor(readonly title: string) {}

  /** Runs `fn`; an assertion it fails is reported under this clause with `what` (what was being checked). */
  private check(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      throw this.violation(what, error);
    }
  }

  /** An `AssertionError` whose message says the clause, what was checked, and the underlying failure. */
  violation(what: string, error: unknown): Error {
    if (error instanceof assert.AssertionError) {
      if (!reported.has(error)) {
        error.message = `${this.title}\n  ${what}\n${indent(error.message)}`;
        reported.add(error);
      }
      return error;
    }
    const violation = new assert.AssertionError({
      message: `${this.title}\n  ${what}\n${indent(describe(error))}`,
      operator: "fail",
    });
    Object.defineProperty(violation, "cause", { value: error, configurable: true, writable: true });
    reported.add(violation);
    return violation;
  }

  equal(actual: unknown, expected: unknown, what: string): void {
    this.check(what, () => assert.deepStrictEqual(actual, expected));
  }

  notEqual(actual: unknown, unexpected: unknown, what: string): void {
    this.check(what, () => assert.notDeepStrictEqual(actual, unexpected));
  }

  ok(value: unknown, what: string): void {
    this.check(what, () => assert.ok(value, "expected a truthy value, got " + inspectValue(value)));
  }

  greater(actual: number, than: number, what: string): void {
    this.check(what, () => assert.ok(actual > than, `expected ${inspectValue(actual)} > ${inspectValue(than)}`));
  }

  atMost(actual: number, most: number, what: string): void {
    this.check(what, () => assert.ok(actual <= most, `expected ${inspectValue(actual)} <= ${inspectValue(most)}`));
  }

  includes(list: readonly unknown[], item: unknown, what: string): void {
    this.check(what, () => assert.ok(list.includes(item), `expected ${inspectValue(item)} among ${list.length} items`));
  }

  excludes(list: readonly unknown[], item: unknown, what: string): void {
    this.check(what, () => assert.ok(!list.includes(item), `expected ${inspectValue(item)} to be absent, it is there`));
  }

  /** `promise` must reject with an instance of `type` (optionally matching `message`); returns the error. */
  async rejects<E extends Error>(
    promise: Promise<unknown>,
    type: ErrorClass<E> | undefined,
    what: string,
    message?: RegExp | string,
  ): Promise<E> {
    let settled: { value: unknown } | { error: unknown };
    try {
      settled = { value: await promise };
    } catch (error) {
      settled = { error };
    }
    this.check(what, () => {
      if ("value" in settled)
        assert.fail(
          `expected a rejection${type ? ` with ${type.name}` : ""}, but it resolved to ${inspectValue(settled.value)}`,
        );
      const error = settled.error;
      if (type && !(error instanceof type)) assert.fail(`expected ${type.name}, got ${describe(error)}`);
      const text = error instanceof Error ? error.message : String(error);
      if (message !== undefined) {
        const matches = typeof message === "string" ? text.includes(message) : message.test(text);
        assert.ok(
          matches,
          `expected the error message to ${typeof message === "string" ? "contain" : "match"} ${inspectValue(message)}, got ${inspectValue(text)}`,
        );
      }
    });
    return (settled as { error: E }).error;
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return inspectValue(error);
}

function inspectValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}...` : value);
  if (value === undefined || typeof value === "number" || typeof value === "boolean" || value === null)
    return String(value);
  if (value instanceof RegExp) return String(value);
  try {
    const json = JSON.stringify(value);
    return json.length > 200 ? `${json.slice(0, 200)}...` : json;
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}
