/**
 * statebag's errors. Every one says what went wrong, where (a JSON pointer, a key, a file:line)
 * and how to fix it, and carries a stable `code` for programs to branch on.
 */

export class StatebagError extends Error {
  readonly code: string;
  readonly hint?: string;
  constructor(code: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(options.hint ? `${message}\n  hint: ${options.hint}` : message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint;
  }
}

/** A mistake in how an agent, provider or session was put together (caught before any model call). */
export class ConfigurationError extends StatebagError {
  constructor(message: string, hint?: string) {
    super("configuration", message, { hint });
  }
}

/** A provider found a value under its key that is not the state it owns. */
export class StateTypeError extends StatebagError {
  constructor(readonly key: string, readonly expected: string, readonly found: unknown) {
    super(
      "state-type",
      `state bag key "${key}" holds ${describe(found)}, but its provider expects "$type": "${expected}"`,
      { hint: `two providers may share the key "${key}": give one an explicit, namespaced key` },
    );
  }
}

function describe(value: unknown): string {
  if (value && typeof value === "object" && "$type" in value) return `"$type": ${JSON.stringify((value as { $type: unknown }).$type)}`;
  return value === null ? "null" : typeof value;
}

/** Escapes one segment of a JSON pointer (RFC 6901). */
export function pointerSegment(segment: string | number): string {
  return String(segment).replace(/~/g, "~0").replace(/\//g, "~1");
}

export function jsonPointer(path: readonly (string | number)[]): string {
  return path.length === 0 ? "" : "/" + path.map(pointerSegment).join("/");
}
