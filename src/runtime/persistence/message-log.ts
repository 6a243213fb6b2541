/**
 * Messages (the entries of a store's message log): `serializeMessage` and `deserializeMessage`,
 * each checked as a message of a stored history is, by the same walker and validators, with
 * problems pointing into the message itself.
 */
import { StatebagError } from "../core/errors.js";
import { PROVIDER_STATE_FAMILY, type TypeRegistry } from "../registry/registry.js";
import { defaultRegistry } from "../validation/default-registry.js";
import { fusedMessageDocument } from "../validation/fused.js";
import { SessionWalker } from "../validation/validate.js";
import type { DeserializeOptions, SerializeOptions } from "./options.js";
import { SessionValidationError } from "./session-error.js";
import { checkedText, fusedSave, fusedText, saveWalker, written } from "./save.js";
import { applyUpgrades, reportMigrated } from "./walk-loaded.js";
import { load } from "./load.js";

/**
 * The history state a log message is checked in on today's path: the message is validated,
 * migrated and reported as the one message of this state, so it is held to exactly what a message
 * in a stored session's history is held to, by the same walker and validators.
 */
const MESSAGE_HOST = "InMemoryChatHistoryState";

const MESSAGE_AT = "/messages/0";

function messageHost(registry: TypeRegistry, message: unknown): Record<string, unknown> {
  const def = registry.table.get(MESSAGE_HOST)?.def;
  if (def === undefined)
    throw new StatebagError(
      "invalid-message",
      `the registry has no "${MESSAGE_HOST}": log messages cannot be checked`,
      {
        hint: "compose the registry with statebag's defaultRegistry()",
      },
    );
  return {
    $type: MESSAGE_HOST,
    $version: def.version,
    messages: [message],
    droppedMessageCount: 0,
    branches: [],
    branchPoints: [],
  };
}

/** A problem found in the host's message 0, as found in the message itself: pointers from the message, no host named. */
function fromHost<T extends { pointer: string; $type?: string; message?: string; hint?: string; expected?: string }>(
  p: T,
): T {
  const text = (s: string) => {
    let out = "";
    let copied = 0;
    for (let j = s.indexOf(MESSAGE_AT); j !== -1; j = s.indexOf(MESSAGE_AT, copied)) {
      const next = s.charCodeAt(j + MESSAGE_AT.length);
      // "/messages/0/x" -> "/x"; "/messages/0" alone -> "the message"; "/messages/01" stays.
      out += s.slice(copied, j) + (next >= 48 && next <= 57 ? MESSAGE_AT : next === 47 ? "" : "the message");
      copied = j + MESSAGE_AT.length;
    }
    out += s.slice(copied);
    out = out.replace(/"InMemoryChatHistoryState" v[0-9]+/g, "a chat message");
    return out.split(`"${MESSAGE_HOST}"`).join("a chat message");
  };
  const at = p.pointer;
  const out = {
    ...p,
    pointer: at === MESSAGE_AT ? "" : at.startsWith(`${MESSAGE_AT}/`) ? at.slice(MESSAGE_AT.length) : at,
  };
  // The message itself is not a tagged value: a problem of its own names no type.
  if (out.$type === MESSAGE_HOST) delete out.$type;
  if (p.message !== undefined) out.message = text(p.message);
  if (p.hint !== undefined) out.hint = text(p.hint);
  if (p.expected !== undefined) out.expected = text(p.expected);
  return out;
}

/**
 * Writes one chat message (a message-log entry) as JSON, validated as a message of a stored history
 * is: the fused check, else the walker (every content, the date-time rule, unknown keys), the
 * save-side JSON limits and no NaN/Infinity. Throws `SessionValidationError` with pointers from the message.
 */
export function serializeMessage(message: unknown, options: SerializeOptions = {}): string {
  const what = "chat message";
  if (fusedSave(options, (limits) => fusedMessageDocument(message, limits) !== undefined))
    return fusedText(message as object, options, what);
  const text = checkedText(message as object, { ...options, validate: true }, what);
  const walker = saveWalker({ ...options, validate: true });
  walker.walkValue(messageHost(options.registry ?? defaultRegistry(), message), PROVIDER_STATE_FAMILY, []);
  const result = walker.result();
  if (!result.ok)
    throw new SessionValidationError(`cannot save ${what}`, result.problems.map(fromHost), {
      preserved: result.preserved.map(fromHost),
      problemCount: result.problemCount,
    });
  return text ?? written(message as object, options.space, what);
}

/**
 * Reads one chat message (a message-log entry) as a session load reads a message of its history:
 * the same JSON limits and duplicate-key rule, then the fused check, else the walker (migrations
 * of older contents, unknown `$type`s kept or refused under `strict`). Throws
 * `SessionValidationError` with pointers from the message.
 */
export function deserializeMessage(input: string | Uint8Array, options: DeserializeOptions = {}): unknown {
  const { doc, fused } = load(input, options, "chat message", fusedMessageDocument);
  if (fused) return doc;
  const host = messageHost(options.registry ?? defaultRegistry(), doc);
  const walker = new SessionWalker({
    registry: options.registry ?? defaultRegistry(),
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
    protoKeysAsData: options.limits?.protoKeys === "keep",
    collectUpgrades: true,
    ownedInput: true,
  });
  walker.walkValue(host, PROVIDER_STATE_FAMILY, []);
  const result = walker.result();
  if (!result.ok)
    throw new SessionValidationError("cannot load chat message", result.problems.map(fromHost), {
      preserved: result.preserved.map(fromHost),
      problemCount: result.problemCount,
    });
  const upgrades = walker.upgrades!;
  // Parsed here and discarded on error: the upgrades go into the message itself (held by the host).
  applyUpgrades(host, upgrades, true);
  reportMigrated(
    upgrades.map((u) => ({ ...u, path: u.path.slice(2) })),
    options,
  );
  if (result.preserved.length > 0) options.onPreserved?.(result.preserved.map(fromHost));
  return (host.messages as unknown[])[0];
}
