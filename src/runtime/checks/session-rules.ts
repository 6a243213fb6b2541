/**
 * The rules of a session object and of its stored envelope, each written once. Three forms use
 * them: the validation walker (`SessionWalker`), which reports every problem with its pointer;
 * the fused check (./fused-runtime.ts and the generated src/generated/fused-check.ts), which only
 * answers "valid as it is"; and the agent, which refuses to run a session that breaks one. A rule
 * changed here changes all three, and test/serialization/fused-check.test.ts holds them to agree.
 *
 * A session object: `id` (a non-empty string), `kind` ("local" | "hosted", or absent),
 * `conversationId` (a string, or an object of named string ids; never with "kind": "local"),
 * `stateBag` (an object of provider key -> tagged state), and `quarantine` (written by a
 * quarantine load). A member whose value is `undefined` is absent (JSON.stringify drops it).
 *
 * An envelope: `{ "format": <name>, "formatVersion": <1..latest>, <payload key>: ... }`, nothing else.
 */
import type { SessionKind } from "../core/session.js";

/** The session object's own keys (anything else is an unknown property). */
export type SessionKey = "id" | "kind" | "conversationId" | "stateBag" | "quarantine";

/** `id`: the stable id a session is stored under, a non-empty string. */
export function isSessionId(value: unknown): value is string {
  return typeof value === "string" && value.length > 0;
}

/** `kind`: "local" (statebag keeps the history) or "hosted" (the service does). */
export function isSessionKind(value: unknown): value is SessionKind {
  return value === "local" || value === "hosted";
}

/**
 * A "local" session keeps its history itself, so it holds no service conversation id: true when
 * `kind` and `conversationId` break that rule (a run would go wrong, so loading refuses it first).
 */
export function localWithConversationId(kind: unknown, conversationId: unknown): boolean {
  return kind === "local" && conversationId !== undefined;
}

/** One named id of an object `conversationId` (`{ "<name>": "<id>" }`): a string. */
export function isConversationIdPart(value: unknown): value is string {
  return typeof value === "string";
}

/**
 * A key statebag looks values up by (state-bag provider keys, conversation id names): anything
 * but `"__proto__"`, which code copying the object with `obj[key] = value` would turn into a
 * prototype. `protoKeysAsData` (`limits.protoKeys: "keep"`) accepts it as an ordinary key.
 */
export function isLookupKey(key: string, protoKeysAsData = false): boolean {
  return key !== "__proto__" || protoKeysAsData;
}

/** A JSON object: not null, not an array (the session, its state bag, an object `conversationId`). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What is wrong with an envelope's `formatVersion`: not an integer >= 1, newer than `latest`, or nothing. */
export function formatVersionProblem(value: unknown, latest: number): "invalid" | "newer" | undefined {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) return "invalid";
  return value > latest ? "newer" : undefined;
}

/** Whether `key` belongs in an envelope whose payload sits under `payload` ("session" or "sessions"). */
export function isEnvelopeKey(key: string, payload: string): boolean {
  return key === payload || key === "format" || key === "formatVersion";
}
