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
    upgrades.map((u) => {
      const value = u.value as { $type: string; $version?: number };
      return {
        pointer: jsonPointer(u.path),
        fromType: u.fromType,
        from: u.from,
        toType: value.$type,
        to: value.$version ?? 1,
      };
    }),
  );
}

/**
 * The shared tail of loading: walks the session (`many: false`) or every session of the array
 * `value` (`many: true`) at `base`, throws `SessionValidationError` on any problem, reports
 * migrations, writes the migrated values into the document (a copy of a caller-owned one) and
 * reports preserved values. Returns the document root.
 */
export function walkLoaded(
  doc: unknown,
  owned: boolean,
  options: DeserializeOptions,
  value: unknown,
  base: readonly (string | number)[],
  many: boolean,
  keepQuarantine = false,
): unknown {
  const walker = new SessionWalker({
    registry: options.registry ?? defaultRegistry(),
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
    protoKeysAsData: options.limits?.protoKeys === "keep",
    collectUpgrades: true,
    ownedInput: owned,
    quarantine: keepQuarantine ? "keep" : "check",
  });
  if (many) {
    const sessions = value as readonly unknown[];
    const path: (string | number)[] = [...base, 0];
    const last = base.length;
    for (let i = 0; i < sessions.length; i++) {
      path[last] = i;
      walker.walkSession(sessions[i], path);
    }
  } else {
    walker.walkSession(value, base);
  }
  const result = walker.result();
  if (!result.ok) {
    const summary = many
      ? `cannot load ${(value as readonly unknown[]).length} sessions`
      : `cannot load session ${sessionLabel(value)}`;
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
