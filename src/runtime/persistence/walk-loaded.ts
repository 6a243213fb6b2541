/**
 * The strict tail of every session load (`walkLoaded`): the walk of the sessions, the error on any
 * problem, the migrations reported and written into the document, the preserved values reported.
 */
import { jsonPointer, setOwn } from "../core/json.js";
import { defaultRegistry } from "../validation/default-registry.js";
import { SessionWalker, type PendingUpgrade } from "../validation/validate.js";
import type { DeserializeOptions } from "./options.js";
import { SessionValidationError, sessionLabel } from "./session-error.js";

export function reportMigrated(upgrades: readonly PendingUpgrade[], options: DeserializeOptions): void {
  if (options.onMigrated === undefined || upgrades.length === 0) return;
  options.onMigrated(
    upgrades.map((upgrade) => {
      const value = upgrade.value as { $type: string; $version?: number };
      return {
        pointer: jsonPointer(upgrade.path),
        fromType: upgrade.fromType,
        from: upgrade.from,
        toType: value.$type,
        to: value.$version ?? 1,
      };
    }),
  );
}

/** A parsed document and where its session (or sessions) sit in it: what the strict tail walks. */
export interface LoadedDocument {
  /** The document root. */
  doc: unknown;
  /** The document was parsed here (not the caller's objects): migrations may write into it in place. */
  owned: boolean;
  /** The session object, or the array of sessions of a `statebag.sessions` document (`many`). */
  payload: unknown;
  /** Path of `payload` from the document root (`["session"]`, `["sessions"]`, or `[]` for a bare session). */
  base: readonly (string | number)[];
  /** `payload` is an array of sessions. */
  many: boolean;
}

/**
 * The shared tail of loading: walks the session (or every session of a `many` document), throws
 * `SessionValidationError` on any problem, reports migrations, writes the migrated values into the
 * document (a copy of a caller-owned one) and reports preserved values. Returns the document root.
 * `quarantine`: what the walker does with a session's `quarantine` entries ("check" them again on a
 * strict load; "keep" them on a quarantine load, which wrote them).
 */
export function walkLoaded(
  loaded: LoadedDocument,
  options: DeserializeOptions,
  quarantine: "check" | "keep" = "check",
): unknown {
  const { doc, owned, payload, base, many } = loaded;
  const walker = new SessionWalker({
    registry: options.registry ?? defaultRegistry(),
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
    protoKeysAsData: options.limits?.protoKeys === "keep",
    collectUpgrades: true,
    ownedInput: owned,
    quarantine,
  });
  if (many) {
    const sessions = payload as readonly unknown[];
    const path: (string | number)[] = [...base, 0];
    const last = base.length;
    for (let index = 0; index < sessions.length; index++) {
      path[last] = index;
      walker.walkSession(sessions[index], path);
    }
  } else {
    walker.walkSession(payload, base);
  }
  const result = walker.result();
  if (!result.ok) {
    const summary = many
      ? `cannot load ${(payload as readonly unknown[]).length} sessions`
      : `cannot load session ${sessionLabel(payload)}`;
    throw new SessionValidationError(summary, result.problems, {
      preserved: result.preserved,
      problemCount: result.problemCount,
    });
  }
  const upgrades = walker.upgrades!;
  reportMigrated(upgrades, options);
  const root = applyUpgrades(doc, upgrades, owned);
  if (result.preserved.length > 0) options.onPreserved?.(result.preserved);
  return root;
}

/**
 * Writes migrated values into the document, in walk order (outer values before the values nested
 * in them). A caller-owned document is copied first, so the caller's objects never change.
 */
export function applyUpgrades(doc: unknown, upgrades: readonly PendingUpgrade[], owned: boolean): unknown {
  if (upgrades.length === 0) return doc;
  const root = owned ? doc : structuredClone(doc);
  for (const { path, value } of upgrades) {
    let node = root as Record<string, unknown>;
    for (let i = 0; i < path.length - 1; i++) node = node[path[i] as string] as Record<string, unknown>;
    setOwn(node, path[path.length - 1], value);
  }
  return root;
}
