/**
 * statebag's errors. Every one says what went wrong, where (a JSON pointer, a key, a file:line)
 * and how to fix it, and carries a stable `code` for programs to branch on.
 */

/**
 * Every `code` a `StatebagError` carries: stable, for programs to branch on. Grouped by where the
 * error comes from; a new error class adds its code here.
 */
export type StatebagErrorCode =
  // Sessions, their state bag and types
  | "configuration"
  | "invalid-id"
  | "invalid-cursor"
  | "state-type"
  | "state-descriptor"
  | "state-ownership"
  | "state-version"
  | "registry"
  | "migration"
  | "migration-definition"
  | "session-invalid"
  | "invalid-message"
  // Parsing and writing JSON
  | "json-syntax"
  | "json-too-large"
  | "json-too-deep"
  | "json-too-many-keys"
  | "json-proto-key"
  | "json-input"
  | "json-value"
  | "json-duplicate-key"
  // Stores
  | "conflict"
  | "session-not-found"
  | "store-unavailable"
  | "store-not-set-up"
  | "store-authentication"
  | "store-key-conflict"
  | "store-read-only"
  | "store-closed"
  | "driver-missing"
  | "driver-unloadable"
  | "bulk-migration"
  | "decryption-failed"
  | "encryption-key"
  | "stream-closed"
  // Blobs (files kept beside the sessions)
  | "blob-budget-exceeded"
  | "blob-not-found"
  | "blob-corrupt"
  | "blob-range"
  // Agents, tools and model clients
  | "history-provider-mismatch"
  | "message-not-found"
  | "history-branch"
  | "history-fork-source-missing"
  | "stream-abandoned"
  | "client-capability"
  | "conversation-not-found"
  | "tool-approval-not-found"
  | "tool-approval-answered"
  | "tool-approval-pending"
  | "tool-approval-in-progress"
  | "tool-approval-invalid"
  | "model-service"
  | "unsupported-content"
  | "missing-dependency"
  // Interop and group chats
  | "interop-format"
  | "interop-import"
  | "interop-export"
  | "channel-key"
  | "group-chat-agent"
  | "group-chat-empty"
  | "workflow-participant"
  | "agent-chat-empty"
  | "agent-chat-not-empty"
  | "agent-chat-document"
  // The chat handler (statebag/http): its chats, and the requests it refuses
  | "chat-not-found"
  | "chat-busy"
  | "chat-message-id-taken"
  | "chat-approval-pending"
  | "chat-approval-not-pending"
  | "http-not-found"
  | "http-method-not-allowed"
  | "http-unauthenticated"
  | "http-unsupported-media-type"
  | "http-body-too-large"
  | "http-invalid-json"
  | "http-invalid-request"
  | "http-message-too-long"
  | "http-unsupported-part"
  | "http-file-too-large"
  | "http-too-many-files"
  | "http-file-type-not-allowed"
  | "http-file-not-inline"
  | "http-file-not-found"
  | "http-range-not-satisfiable"
  | "http-request-timeout"
  | "http-invalid-target"
  | "http-not-implemented"
  | "http-internal"
  // The CLI's code generator
  | "toolchain-missing";

export class StatebagError extends Error {
  readonly code: StatebagErrorCode;
  /**
   * How to fix it; never empty. A thrower that knows the fix gives it; otherwise it is the general
   * advice for the error's `code`. It is a field of its own, never part of `message`: the CLI prints
   * it on its own line, `toString()` after the message.
   */
  readonly hint: string;
  constructor(code: StatebagErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint !== undefined && options.hint.trim() !== "" ? options.hint : defaultHint(code);
  }

  /** `Name: message`, then `  hint: ...` on its own line. */
  override toString(): string {
    return `${this.name}: ${this.message}\n  hint: ${this.hint}`;
  }
}

/** The advice for an error whose thrower gave no specific hint, by code (family prefix for json-*, interop-*, store-*). */
const DEFAULT_HINTS: Record<string, string> = {
  configuration: "correct the option or argument the message names: it says what was expected and what was given",
  registry: "correct the type definition the message names ($type, version, schema), or the registry it is added to",
  "migration-definition": "correct the defineMigration call the message names (type, from, to and an up function)",
  migration:
    "fix the migration step the message names so it returns a value valid at the target version; the stored data was not changed",
  "session-invalid": "fix the values at the JSON pointers listed (each says what was expected and what was found)",
  json: "fix the JSON input at the position the message gives",
  interop:
    "the message names the field and the JSON pointer of the document that could not be converted; correct it in the source document",
  "decryption-failed":
    "the row was not decrypted: give the keyring holding its key id, and check that the row was not copied from another id, owner, log or store",
  "encryption-key": 'fix the keyring: {"current": "<kid>", "keys": {"<kid>": "<32 bytes, base64>"}}',
  store: "check the store URL and that its server is reachable; the message names the store",
  chat: "the message says what the chat request ran into; docs/chat-ui.md lists what each problem means for the page",
  http: "the request must change as the message says; docs/chat-ui.md lists every problem the chat handler answers",
};

function defaultHint(code: string): string {
  const family = code.startsWith("json-")
    ? "json"
    : code.startsWith("interop-")
      ? "interop"
      : code.startsWith("store-")
        ? "store"
        : code.startsWith("chat-")
          ? "chat"
          : code.startsWith("http-")
            ? "http"
            : code;
  return (
    DEFAULT_HINTS[family] ??
    "the message says what went wrong and where; rerun with STATEBAG_DEBUG=1 for the stack trace, and report it if it looks like a bug in statebag"
  );
}

/** A mistake in how an agent, provider or session was put together (caught before any model call). */
export class ConfigurationError extends StatebagError {
  constructor(message: string, hint?: string) {
    super("configuration", message, { hint });
  }
}

/** A provider found a value under its key that is not the state it owns. */
export class StateTypeError extends StatebagError {
  constructor(
    readonly key: string,
    readonly expected: string,
    readonly found: unknown,
  ) {
    super(
      "state-type",
      `state bag key "${key}" holds ${describe(found)}, but its provider expects "$type": "${expected}"`,
      { hint: `two providers may share the key "${key}": give one an explicit, namespaced key` },
    );
  }
}

function describe(value: unknown): string {
  if (value && typeof value === "object" && "$type" in value)
    return `"$type": ${JSON.stringify((value as { $type: unknown }).$type)}`;
  return value === null ? "null" : typeof value;
}
