/**
 * Validated (de)serialization of sessions: the persistence room's face. The stored form (wire
 * format) is described in stored-form.ts; saving is save.ts, loading load.ts (its strict tail
 * walk-loaded.ts, quarantine loads quarantine.ts), the message log's entries message-log.ts.
 *
 * Loading = safe parse (size/depth/key limits, finite numbers, no key twice in an object) ->
 * envelope check -> migrations -> validation of every tagged value (one validator per `$type`) ->
 * the session. Unknown types and newer versions are kept verbatim (reported through `onPreserved`)
 * unless `strict`.
 *
 * Saving always checks the session object itself (id, kind, conversationId, stateBag, and that
 * every state value is a `$type`-tagged object): O(state keys), cheap; and, by a walk of its
 * numbers, it never writes a NaN or Infinity as null. `validate: true` makes save
 * and load one contract: every tagged value is validated exactly as on load, the document is
 * checked against the same parse limits (depth, keys per object, size of the text) and must be
 * plain JSON that reads back equal (no NaN, Dates, class instances, `undefined` array items).
 * Whatever it accepts, loading with the same options gives back equal; whatever loading would
 * refuse, it refuses with the same problem, before anything is written. Stores pass it. It is
 * opt-in because it costs a walk of the data; code that builds state through typed providers can
 * skip it, code that writes to a store should not.
 *
 * `"__proto__"` keys: inside values (a tool's output, a message's extra properties) such a key is
 * ordinary data, kept as an own property exactly as `JSON.parse` does, on save and on load.
 * Where statebag looks values up by key (state-bag provider keys, conversation id names, the
 * session and envelope objects) it is refused, on save and on load alike. Pass the same
 * `limits: { protoKeys: "reject" }` to both sides to refuse it everywhere, or `"keep"` to accept it
 * everywhere, state-bag keys included.
 */
export { SESSION_FORMAT, SESSIONS_FORMAT, SESSION_FORMAT_VERSION } from "./stored-form.js";
export type { DeserializeOptions, MigratedValue, SerializeOptions } from "./options.js";
export { SessionValidationError } from "./session-error.js";
export { serializeSession, serializeSessions } from "./save.js";
export { deserializeSession, deserializeSessions } from "./load.js";
export { deserializeMessage, serializeMessage } from "./message-log.js";
