/**
 * The validation walker: checks a session against a type registry.
 *
 * - The session object: `id` (non-empty string), `stateBag` (object), `kind` (`local`|`hosted`),
 *   `conversationId` (string, or an object of strings; none on a local session); no other keys.
 *   The rules are ./session-rules.ts, which the fused check and the agent apply too.
 * - Every state bag value is dispatched by its `$type` (a `Map` lookup, wherever the key sits in
 *   the object) to that type's own compiled validator, then the walker follows the type's `slots`
 *   to the nested polymorphic values (message contents, annotations, ...) and dispatches each of
 *   those the same way. One validator per type, never one big union.
 * - A value whose `$type` the registry does not know, or whose version is newer than the registry
 *   knows, is kept verbatim and reported in `preserved` (an error with `strict: true`).
 * - A value older than the latest version is upgraded by the registry's migrations before it is
 *   validated (the upgraded value is checked; `validateSession` never modifies its input); with no
 *   migration it is an error naming the type and both versions.
 * - Problems are collected, each with a JSON pointer from the document root: the first
 *   `maxProblems` are kept and every one is counted, so a document with millions of mistakes costs
 *   time linear in its size and an error of bounded size.
 *
 * Hot path: no allocation per value (the current path lives in one reused array; pointers and
 * messages are built only when something is reported), no closures per call, slot paths compiled
 * once per type into straight-line code (`SlotWalk`, with the generic `walkChildren` as fallback).
 * On the error path only, a failing value is re-checked by an `allErrors` validator compiled from
 * its type's schema, so generated validators (which stop at the first error) still yield every
 * problem of the value.
 */
import { boundedPointer, describeValue, pointerSegment, quoted } from "../core/json.js";
import { emitSchemaProblems } from "./ajv-problems.js";
import { JsonParseError, parseJson } from "../json/safe-json.js";
import { UNLIMITED, fusedFor, fusedSession, fusedValue } from "./fused.js";
import { MigrationError } from "../registry/migrations.js";
import {
  DEFAULT_MAX_PROBLEMS,
  ProblemList,
  detailText,
  pointerLabel,
  type ProblemCode,
  type ProblemDetails,
  type PreservedValue,
  type SessionProblemDetails,
  type ValidationProblem,
} from "../core/problems.js";
import { PROVIDER_STATE_FAMILY, type RegistryEntry, type TypeRegistry } from "../registry/registry.js";
import { defaultRegistry } from "./default-registry.js";
import type { SlotNode, SlotVisitor } from "../registry/slot-walk.js";
import type { TypeDefinition } from "../registry/registry-types.js";
import {
  isConversationIdPart,
  isJsonObject,
  isLookupKey,
  isSessionId,
  isSessionKind,
  localWithConversationId,
} from "../checks/session-rules.js";

export interface ValidationResult {
  ok: boolean;
  /** The first `maxProblems` problems, in document order. */
  problems: ValidationProblem[];
  /** How many problems there are in all, when `problems` does not hold them all (more than `maxProblems`). */
  problemCount?: number;
  preserved: PreservedValue[];
}

export interface ValidateOptions {
  /** Default: `defaultRegistry()`. */
  registry?: TypeRegistry;
  /** Unknown types and newer versions are errors instead of preserved values. Default false. */
  strict?: boolean;
  /** Maximum nesting of tagged values inside tagged values (guards cycles in in-memory data). Default 128. */
  maxNesting?: number;
  /** How many problems to keep (the rest are only counted, in `problemCount`). Default 100. */
  maxProblems?: number;
}

/** @internal A migrated value waiting to be written back into the document. */
export interface PendingUpgrade {
  /** Path from the document root (including any base path) to the value. */
  path: (string | number)[];
  value: unknown;
  /** The `$type` and version the value had before migration. */
  fromType: string;
  from: number;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * @internal Where a quarantined value came from: `/stateBag/<key>` or `/stateBag/<key>/messages/<n>`
 * (RFC 6901, relative to the session object). Undefined for anything else.
 */
export function parseQuarantinePointer(pointer: unknown): { key: string; message?: number } | undefined {
  if (typeof pointer !== "string" || !pointer.startsWith("/stateBag/")) return undefined;
  const parts = pointer.slice(10).split("/");
  const key = parts[0].replace(/~1/g, "/").replace(/~0/g, "~");
  if (parts.length === 1) return { key };
  if (parts.length === 3 && parts[1] === "messages" && /^(0|[1-9][0-9]{0,8})$/.test(parts[2]))
    return { key, message: Number(parts[2]) };
  return undefined;
}

/**
 * Validates a session (envelope shape, every state value, every nested tagged value). Never
 * throws for bad data and never modifies `session`.
 */
export function validateSession(session: unknown, options: ValidateOptions = {}): ValidationResult {
  const registry = options.registry ?? defaultRegistry();
  // The fused check decides "valid as it is"; anything else (and every report) is the walker's.
  if (fusedFor(registry) && fusedSession(session, 1, fusedUnlimited(options.maxNesting)))
    return { ok: true, problems: [], preserved: [] };
  const walker = new SessionWalker({
    registry,
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
  });
  walker.walkSession(session, EMPTY_PATH);
  return walker.result();
}

const EMPTY_PATH: readonly (string | number)[] = [];

/** Fused limits for an in-memory check: no JSON limits of its own, the caller's tagged nesting. */
function fusedUnlimited(maxNesting: number | undefined) {
  return maxNesting === undefined ? UNLIMITED : { ...UNLIMITED, maxNesting };
}

export interface ValidateValueOptions extends ValidateOptions {
  /** The family the value must belong to. Default `"ProviderState"`. */
  family?: string;
  /** Path of the value in its document, for pointers (default: the value is the root). */
  path?: readonly (string | number)[];
}

/**
 * Validates one tagged value (a provider state, or a member of another family such as a message
 * content) with everything nested in it. Never throws for bad data; never modifies `value`.
 */
export function validateValue(value: unknown, options: ValidateValueOptions = {}): ValidationResult {
  const registry = options.registry ?? defaultRegistry();
  if (
    fusedFor(registry) &&
    fusedValue(value, options.family ?? PROVIDER_STATE_FAMILY, 1, fusedUnlimited(options.maxNesting))
  )
    return { ok: true, problems: [], preserved: [] };
  const walker = new SessionWalker({
    registry,
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
  });
  walker.walkValue(value, options.family ?? PROVIDER_STATE_FAMILY, options.path ?? EMPTY_PATH);
  return walker.result();
}

/** A tagged value off the fast path (`SessionWalker.slowPath`): what was read of it, where it stands. */
interface SlowPathInput {
  value: Record<string, unknown>;
  /** Its `$type`. */
  type: string;
  /** Its `$version` (1 when absent). */
  version: number;
  /** The registry's entry for `type`, if any. */
  entry: RegistryEntry | undefined;
  /** The family its position holds. */
  family: string;
  /** Its depth in the walker's path. */
  depth: number;
}

/** @internal The walker behind `validateSession` and the (de)serializers. One instance per call. */
export class SessionWalker implements SlotVisitor {
  private readonly problems: ProblemList;
  readonly preserved: PreservedValue[] = [];
  /** Upgraded values to write back (null when the caller only validates). */
  readonly upgrades: PendingUpgrade[] | null;
  private readonly table: ReadonlyMap<string, RegistryEntry>;
  private readonly path: (string | number)[] = [];
  private readonly maxNesting: number;
  /**
   * Schema problems of the tagged values being walked (the current value and its ancestors), by
   * pointer: the walker's own report on a nested position supersedes ajv's report on the same spot.
   */
  private schemaAt: Map<string, number> | null = null;

  private readonly registry: TypeRegistry;
  private readonly strict: boolean;
  /** False: check the session object and the tags of its state values only (no registry lookups). */
  private readonly deep: boolean;

  /** Use the generic slot walk even where a compiled one exists (for tests). */
  private readonly generic: boolean;

  /** The document was parsed by the caller and is discarded on error: migrations need not copy values first. */
  private readonly owned: { owned: boolean } | undefined;

  /** `"__proto__"` is accepted as a state-bag key too (`limits.protoKeys: "keep"`). */
  private readonly protoKeysAsData: boolean;

  /**
   * What to do with a session's `quarantine` entries (values a quarantine load set aside):
   * `"check"` (default, the strict load and `validateSession`): validate each one again where it
   * came from, so its problems are reported as if it had never been moved (and one that now
   * validates is reported as `quarantined`); `"keep"` (saving, quarantine loads): check their shape only.
   */
  private readonly quarantine: "check" | "keep";

  constructor(options: {
    registry: TypeRegistry;
    strict?: boolean;
    collectUpgrades?: boolean;
    maxNesting?: number;
    maxProblems?: number;
    deep?: boolean;
    genericWalk?: boolean;
    ownedInput?: boolean;
    protoKeysAsData?: boolean;
    quarantine?: "check" | "keep";
  }) {
    this.quarantine = options.quarantine ?? "check";
    this.protoKeysAsData = options.protoKeysAsData === true;
    this.problems = new ProblemList(Math.max(1, options.maxProblems ?? DEFAULT_MAX_PROBLEMS));
    this.owned = options.ownedInput === true ? { owned: true } : undefined;
    this.generic = options.genericWalk === true;
    this.registry = options.registry;
    this.strict = options.strict === true;
    this.deep = options.deep !== false;
    this.table = options.registry.table;
    this.upgrades = options.collectUpgrades === true ? [] : null;
    this.maxNesting = options.maxNesting ?? 128;
  }

  result(): ValidationResult {
    const list = this.problems;
    const result: ValidationResult = { ok: list.total === 0, problems: list.kept, preserved: this.preserved };
    if (list.total > list.kept.length) result.problemCount = list.total;
    return result;
  }

  /** Walks one session; `base` is its path from the document root (e.g. `["session"]`). */
  walkSession(session: unknown, base: readonly (string | number)[]): void {
    const path = this.path;
    const baseDepth = base.length;
    for (let i = 0; i < baseDepth; i++) path[i] = base[i];
    if (!isJsonObject(session)) {
      this.sessionProblem(
        baseDepth,
        "a session object ({ id, stateBag, ... })",
        describeValue(session),
        "the session must be a JSON object",
        undefined,
        { kind: "session", reason: "not-an-object" },
      );
      return;
    }
    let bag: unknown;
    let sawId = false;
    let sawBag = false;
    let kind: unknown;
    let conversationId: unknown;
    let quarantine: unknown;
    for (const key in session) {
      if (!hasOwn.call(session, key)) continue;
      const value = session[key];
      if (value === undefined) continue;
      switch (key) {
        case "id":
          sawId = true;
          if (!isSessionId(value)) {
            path[baseDepth] = "id";
            this.sessionProblem(
              baseDepth + 1,
              "a non-empty string",
              describeValue(value),
              "session.id is the stable id the session is stored under",
              undefined,
              { kind: "session", property: "id", reason: "invalid" },
            );
          }
          break;
        case "stateBag":
          sawBag = true;
          bag = value;
          break;
        case "kind":
          kind = value;
          if (!isSessionKind(value)) {
            path[baseDepth] = "kind";
            this.sessionProblem(
              baseDepth + 1,
              '"local" or "hosted" (or no kind)',
              describeValue(value),
              "omit kind while it is not decided yet",
              undefined,
              { kind: "session", property: "kind", reason: "invalid" },
            );
          }
          break;
        case "conversationId":
          conversationId = value;
          this.checkConversationId(value, baseDepth);
          break;
        case "quarantine":
          quarantine = value;
          break;
        default:
          path[baseDepth] = key;
          this.sessionProblem(
            baseDepth + 1,
            "no such property (a session has id, kind, conversationId, stateBag)",
            describeValue(value),
            `remove ${quoted(key)}; state belongs in the state bag under a provider key`,
            `unknown session property ${quoted(key)}`,
            { kind: "session", property: detailText(key), reason: "unknown-property" },
          );
      }
    }
    if (localWithConversationId(kind, conversationId)) {
      // A local session keeps its history itself; a run would refuse it, so loading does first.
      path[baseDepth] = "conversationId";
      this.sessionProblem(
        baseDepth + 1,
        'no conversationId (the session is "kind": "local")',
        describeValue(conversationId),
        'a local session keeps its history itself: drop conversationId, or make the session "kind": "hosted" if the service holds the conversation',
        'a "kind": "local" session holds a conversationId',
        { kind: "session", property: "conversationId", reason: "conflict" },
      );
    }
    if (!sawId) {
      path[baseDepth] = "id";
      this.sessionProblem(
        baseDepth + 1,
        "a non-empty string",
        "nothing (the property is missing)",
        "every session has an id",
        'the session has no "id"',
        { kind: "session", property: "id", reason: "missing" },
      );
    }
    if (!sawBag) {
      path[baseDepth] = "stateBag";
      this.sessionProblem(
        baseDepth + 1,
        "an object of provider key -> state",
        "nothing (the property is missing)",
        "an empty session has stateBag: {}",
        'the session has no "stateBag"',
        { kind: "session", property: "stateBag", reason: "missing" },
      );
      return;
    }
    if (!isJsonObject(bag)) {
      path[baseDepth] = "stateBag";
      this.sessionProblem(
        baseDepth + 1,
        "an object of provider key -> state",
        describeValue(bag),
        "stateBag maps each provider key to that provider's $type-tagged state",
        undefined,
        { kind: "session", property: "stateBag", reason: "invalid" },
      );
      return;
    }
    path[baseDepth] = "stateBag";
    for (const key in bag) {
      if (!hasOwn.call(bag, key)) continue;
      path[baseDepth + 1] = key;
      if (!isLookupKey(key, this.protoKeysAsData)) {
        this.protoKey(
          baseDepth + 2,
          "provider key",
          "rename the provider key: code that copies the state bag with bag[key] = value would set its prototype",
          "stateBag",
        );
        continue;
      }
      if (this.deep) this.visitTagged(bag[key], PROVIDER_STATE_FAMILY, baseDepth + 2, 0);
      else this.tagOnly(bag[key], PROVIDER_STATE_FAMILY, baseDepth + 2);
    }
    if (quarantine !== undefined) this.walkQuarantine(quarantine, baseDepth, bag);
  }

  /**
   * The session's `quarantine` section: an array of `{ pointer, text, reason }`, where `pointer`
   * (from the session object) is `/stateBag/<key>` or `/stateBag/<key>/messages/<n>`. With
   * `quarantine: "check"`, each text is parsed (same limits) and validated again at its pointer: a
   * state-bag entry exactly as it stood; a message inside a copy of the current value at `<key>`,
   * put back at index `n`, keeping only the problems of that message.
   */
  private walkQuarantine(q: unknown, d: number, bag: Record<string, unknown> | undefined): void {
    const path = this.path;
    path[d] = "quarantine";
    if (!Array.isArray(q)) {
      this.sessionProblem(
        d + 1,
        "an array of quarantined values ({ pointer, text, reason })",
        describeValue(q),
        "quarantine is written by a quarantine load; leave it as it is",
        undefined,
        { kind: "session", property: "quarantine", reason: "invalid" },
      );
      return;
    }
    for (let i = 0; i < q.length; i++) {
      path[d] = "quarantine";
      path[d + 1] = i;
      const entry = q[i] as Record<string, unknown> | null;
      const target =
        typeof entry === "object" && entry !== null && !Array.isArray(entry)
          ? parseQuarantinePointer(entry.pointer)
          : undefined;
      if (
        target === undefined ||
        typeof entry!.text !== "string" ||
        typeof entry!.reason !== "object" ||
        entry!.reason === null
      ) {
        this.sessionProblem(
          d + 2,
          '{ "pointer": "/stateBag/<key>[/messages/<n>]", "text": "<JSON text>", "reason": { ...problem } }',
          describeValue(entry),
          "quarantine is written by a quarantine load; leave it as it is",
          undefined,
          { kind: "session", property: "quarantine", reason: "invalid" },
        );
        continue;
      }
      if (this.quarantine === "keep" || !this.deep) continue;
      this.recheckQuarantined(entry!.text as string, target, d, i, bag, entry!.reason as ValidationProblem);
    }
  }

  private recheckQuarantined(
    text: string,
    target: { key: string; message?: number },
    d: number,
    index: number,
    bag: Record<string, unknown> | undefined,
    reason: ValidationProblem,
  ): void {
    const path = this.path;
    const before = this.problems.total;
    path[d] = "stateBag";
    path[d + 1] = target.key;
    let value: unknown;
    try {
      value = parseJson(text, { protoKeys: "keep" });
    } catch (err) {
      if (!(err instanceof JsonParseError)) throw err;
      path[d] = "quarantine";
      path[d + 1] = index;
      this.problems.add({
        code: "json",
        pointer: this.pointer(d + 2) + "/text",
        expected: "the JSON text of the quarantined value",
        found: err.code,
        message: err.message,
      });
      return;
    }
    if (target.message === undefined) {
      this.visitTagged(value, PROVIDER_STATE_FAMILY, d + 2, 0);
    } else {
      const shell = bag !== undefined && hasOwn.call(bag, target.key) ? bag[target.key] : undefined;
      const messages =
        typeof shell === "object" && shell !== null && !Array.isArray(shell)
          ? (shell as { messages?: unknown }).messages
          : undefined;
      if (Array.isArray(messages)) {
        const at = Math.min(target.message, messages.length);
        const copy = { ...(shell as object), messages: [...messages.slice(0, at), value, ...messages.slice(at)] };
        const sub = new SessionWalker({
          registry: this.registry,
          strict: this.strict,
          maxNesting: this.maxNesting,
          maxProblems: this.problems.limit,
          quarantine: "keep",
        });
        sub.walkValue(copy, PROVIDER_STATE_FAMILY, path.slice(0, d + 2));
        path[d + 2] = "messages";
        path[d + 3] = at;
        const prefix = this.pointer(d + 4);
        for (const problem of sub.result().problems) {
          if (
            problem.pointer === prefix ||
            (problem.pointer.startsWith(prefix) && problem.pointer.charCodeAt(prefix.length) === 47)
          )
            this.problems.add(problem);
        }
      }
    }
    if (this.problems.total === before) {
      // Valid now (the code was fixed), or no history to check it in: still set aside.
      path[d] = "quarantine";
      path[d + 1] = index;
      const pointer = this.pointer(d + 2);
      const from = `/${["stateBag", target.key].map(pointerSegment).join("/")}${target.message === undefined ? "" : `/messages/${target.message}`}`;
      const why = `a value was set aside by a quarantine load from ${pointerLabel(from)}`;
      this.problems.add({
        code: "quarantined",
        pointer,
        expected: "no quarantined values",
        found: `a value set aside by a quarantine load (${describeValue(reason.message)})`,
        message: `${pointerLabel(pointer)}: ${why}`,
        reason: why,
        hint: "load with { quarantine: true } to run without it; put it back in place by hand once it validates",
      });
    }
  }

  /** Walks one tagged value of `family`; `base` is its path from the document root. */
  walkValue(value: unknown, family: string, base: readonly (string | number)[]): void {
    const path = this.path;
    const baseDepth = base.length;
    for (let i = 0; i < baseDepth; i++) path[i] = base[i];
    if (this.deep) this.visitTagged(value, family, baseDepth, 0);
    else this.tagOnly(value, family, baseDepth);
  }

  private checkConversationId(value: unknown, d: number): void {
    if (typeof value === "string") return;
    const path = this.path;
    path[d] = "conversationId";
    if (isJsonObject(value)) {
      for (const name in value) {
        if (!hasOwn.call(value, name)) continue;
        const id = value[name];
        if (!isLookupKey(name, this.protoKeysAsData)) {
          path[d + 1] = name;
          this.protoKey(
            d + 2,
            "conversation id name",
            "rename the id: code that copies conversationId with obj[key] = value would set its prototype",
            "conversationId",
          );
        } else if (!isConversationIdPart(id)) {
          path[d + 1] = name;
          this.sessionProblem(
            d + 2,
            "a string",
            describeValue(id),
            "conversationId is a string, or an object of named string ids",
            undefined,
            { kind: "session", property: "conversationId", reason: "invalid" },
          );
        }
      }
      return;
    }
    this.sessionProblem(
      d + 1,
      "a string, or an object of named string ids",
      describeValue(value),
      "omit conversationId for a session whose history is kept locally",
      undefined,
      { kind: "session", property: "conversationId", reason: "invalid" },
    );
  }

  /**
   * A `"__proto__"` key where statebag looks values up by key (state-bag keys, conversation id
   * names). Inside values it is ordinary data; here it is refused, on save as on load.
   */
  private protoKey(d: number, what: string, hint: string, property: "stateBag" | "conversationId"): void {
    const pointer = this.pointer(d);
    this.problems.add({
      code: "session",
      pointer,
      expected: `a ${what} other than "__proto__"`,
      found: 'the key "__proto__"',
      message: `a "__proto__" key at ${pointerLabel(pointer)} is not accepted as a ${what}`,
      hint,
      details: { kind: "session", property, reason: "proto-key" },
    });
  }

  private sessionProblem(
    d: number,
    expected: string,
    found: string,
    hint: string,
    message: string | undefined,
    details: SessionProblemDetails,
  ): void {
    const pointer = this.pointer(d);
    const problem: ValidationProblem = {
      code: "session",
      pointer,
      expected,
      found,
      message: message ?? `${pointerLabel(pointer)} must be ${expected}, found ${found}`,
      hint,
      details,
    };
    if (message === undefined) problem.reason = `must be ${expected}, found ${found}`;
    this.problems.add(problem);
  }

  private pointer(d: number): string {
    const path = this.path;
    let out = "";
    for (let i = 0; i < d; i++) out += "/" + pointerSegment(path[i]);
    return out;
  }

  /** Shallow mode: the value is an object with a string `$type` and a valid `$version`. */
  private tagOnly(value: unknown, family: string, d: number): void {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.tagProblem(
        d,
        "not-tagged",
        `an object with "$type" (${family} family)`,
        describeValue(value),
        undefined,
        `positions of the ${family} family hold "$type"-tagged objects`,
        { kind: "family", family },
      );
      return;
    }
    const tag = (value as Record<string, unknown>).$type;
    if (typeof tag !== "string") {
      this.tagProblem(
        d,
        "missing-type",
        `a "$type" string naming a type of the ${family} family`,
        tag === undefined ? 'an object without "$type"' : `"$type": ${describeValue(tag)}`,
        undefined,
        `every ${family} value carries "$type"`,
        { kind: "family", family },
      );
      return;
    }
    const version = (value as Record<string, unknown>).$version;
    if (version !== undefined && !(typeof version === "number" && Number.isInteger(version) && version >= 1)) {
      this.tagProblem(
        d,
        "invalid-version",
        "an integer >= 1 (or no $version, meaning 1)",
        describeValue(version),
        tag,
        "$version counts versions of the type: 1, 2, 3, ...",
        { kind: "family", family },
      );
    }
  }

  // -----------------------------------------------------------------------------------------------
  // The hot part: one tagged value.

  /** @internal One tagged value of `family` at depth `d`. Also called by compiled slot walks (`SlotWalk`). */
  visitTagged(value: unknown, family: string, d: number, nesting: number): void {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.tagProblem(
        d,
        "not-tagged",
        `an object with "$type" (${family} family)`,
        describeValue(value),
        undefined,
        `positions of the ${family} family hold "$type"-tagged objects`,
        { kind: "family", family },
      );
      return;
    }
    let tagged = value as Record<string, unknown>;
    const type = tagged.$type;
    if (typeof type !== "string") {
      this.tagProblem(
        d,
        "missing-type",
        `a "$type" string naming a type of the ${family} family`,
        type === undefined ? 'an object without "$type"' : `"$type": ${describeValue(type)}`,
        undefined,
        type === undefined
          ? `every ${family} value carries "$type" (it may sit anywhere among the keys)`
          : '"$type" must be a string id',
        { kind: "family", family },
      );
      return;
    }
    const rawVersion = tagged.$version;
    let version = 1;
    if (rawVersion !== undefined) {
      if (typeof rawVersion === "number" && Number.isInteger(rawVersion) && rawVersion >= 1) version = rawVersion;
      else {
        this.tagProblem(
          d,
          "invalid-version",
          "an integer >= 1 (or no $version, meaning 1)",
          describeValue(rawVersion),
          type,
          "$version counts versions of the type: 1, 2, 3, ...",
          { kind: "family", family },
        );
        return;
      }
    }
    let entry = this.table.get(type);
    let migratedFrom: string | undefined;
    if (entry === undefined || version !== entry.def.version || entry.def.family !== family) {
      const next = this.slowPath({ value: tagged, type, version, entry, family, depth: d });
      if (next === undefined) return;
      entry = next.entry;
      if (next.upgraded !== undefined) {
        tagged = next.upgraded;
        migratedFrom = `"${type}" v${version}`;
      }
    }
    const def = entry.def;
    const reported = def.validate(tagged) ? null : this.schemaProblems(def, tagged, d, migratedFrom);
    const tree = entry.slotTree;
    if (tree !== null) {
      if (nesting >= this.maxNesting) {
        this.tagProblem(
          d,
          "too-deep",
          `at most ${this.maxNesting} levels of nested tagged values`,
          "deeper nesting (or a cycle)",
          type,
          "tagged values are nested too deeply; is there a reference cycle in the data?",
          { kind: "limit", option: "maxNesting", limit: this.maxNesting, actual: nesting + 1 },
        );
      } else {
        const walk = entry.slotWalk;
        if (walk !== null && !this.generic) walk(this, tagged, d, nesting + 1, this.path);
        else this.walkChildren(tagged, tree, d, nesting + 1);
      }
    }
    // Nothing after this value's walk can report at its positions again.
    if (reported !== null) for (const position of reported) this.schemaAt!.delete(position);
  }

  /**
   * Unknown type, wrong family, or a version other than the latest. Returns the entry to validate
   * against, with the migrated value when the value was upgraded; undefined to stop here (reported,
   * or preserved).
   */
  private slowPath(at: SlowPathInput): { entry: RegistryEntry; upgraded?: Record<string, unknown> } | undefined {
    const { value, type, version, entry, family, depth } = at;
    if (entry !== undefined && entry.def.family !== family) {
      this.wrongFamily(depth, type, entry.def.family, family);
      return undefined;
    }
    if (entry !== undefined && version > entry.def.version) {
      const pointer = this.pointer(depth);
      const message = `"${type}" v${version} at ${pointerLabel(pointer)} is newer than this registry's v${entry.def.version}`;
      if (this.strict) {
        this.problems.add({
          code: "newer-version",
          pointer,
          $type: type,
          expected: `${quoted(type)} at v${entry.def.version} or older`,
          found: `v${version}`,
          message,
          hint: "upgrade the code (or statebag) that reads this document, or load without strict to keep the value verbatim",
          details: { kind: "version", $version: version, expectedVersion: entry.def.version },
        });
      } else {
        this.preserved.push({
          pointer,
          $type: type,
          version,
          reason: "newer-version",
          message: `${message}; kept verbatim`,
        });
      }
      return undefined;
    }
    // needsUpgrade covers former names (renames) and types only migrations still read.
    if (entry === undefined && !this.registry.needsUpgrade(value as { $type: string })) {
      const pointer = this.pointer(depth);
      const message = `"$type": ${quoted(type)} at ${pointerLabel(pointer)} is not a registered type`;
      if (this.strict) {
        this.problems.add({
          code: "unknown-type",
          pointer,
          $type: type,
          expected: `a registered ${family} type`,
          found: `"$type": ${quoted(type)}`,
          message,
          hint: "register the type (npx statebag gen, or registry.register(...)), or load without strict to keep it verbatim",
          details: { kind: "family", family },
        });
      } else {
        this.preserved.push({
          pointer,
          $type: type,
          version,
          reason: "unknown-type",
          message: `${message}; kept verbatim`,
        });
      }
      return undefined;
    }
    // Older version, or a former name: migrate.
    const pointer = this.pointer(depth);
    let upgraded: Record<string, unknown>;
    try {
      upgraded = this.registry.upgrade<Record<string, unknown>>(value as { $type: string }, pointer, this.owned);
    } catch (err) {
      if (!(err instanceof MigrationError)) throw err;
      const noStep = err.reason === "no-step";
      const latest = entry?.def.version;
      const details: ProblemDetails = { kind: "version", $version: version };
      if (latest !== undefined) details.expectedVersion = latest;
      // Stored data that does not match its own version's schema is a schema problem at its own
      // pointer (the data is wrong), not a migration failure.
      const invalidData = err.reason === "invalid-data";
      this.problems.add({
        code: noStep ? "old-version" : invalidData ? "schema" : "migration-failed",
        pointer: invalidData ? err.pointer : pointer,
        $type: type,
        expected:
          latest !== undefined
            ? `"${type}" v${latest}, or a migration from v${version}`
            : `a migration from "${type}" v${version}`,
        found: `"${type}" v${version}`,
        // The value's place shortened like every other message (the error's own names the full pointer).
        message: pointer === "" ? err.message : err.messageAt(pointerLabel(pointer)),
        hint: err.hint,
        details,
      });
      return undefined;
    }
    const newType = upgraded.$type as string;
    const target = this.table.get(newType);
    if (target === undefined) {
      // Cannot happen: the runner stops only at a registered latest version.
      this.tagProblem(
        depth,
        "migration-failed",
        "a registered type after migration",
        `"$type": "${newType}"`,
        type,
        "check the migration chain's targets",
        { kind: "version", $version: version },
      );
      return undefined;
    }
    if (target.def.family !== family) {
      this.wrongFamily(depth, newType, target.def.family, family);
      return undefined;
    }
    if (this.upgrades !== null)
      this.upgrades.push({ path: this.path.slice(0, depth), value: upgraded, fromType: type, from: version });
    return { entry: target, upgraded };
  }

  private wrongFamily(d: number, t: string, actual: string, expected: string): void {
    this.tagProblem(
      d,
      "wrong-family",
      `a value of the ${expected} family`,
      `"$type": "${t}" (${actual} family)`,
      t,
      `"${t}" is registered in the ${actual} family and cannot stand where a value of the ${expected} family belongs`,
      { kind: "family", family: expected, actualFamily: actual },
    );
  }

  private tagProblem(
    d: number,
    code: ProblemCode,
    expected: string,
    found: string,
    $type: string | undefined,
    hint: string,
    details: ProblemDetails,
  ): void {
    const pointer = boundedPointer(this.pointer(d));
    const superseded = this.schemaAt?.get(pointer);
    if (superseded !== undefined) {
      this.schemaAt!.delete(pointer);
      this.problems.withdraw(pointer, superseded);
    }
    const problem: ValidationProblem = {
      code,
      pointer,
      expected,
      found,
      message: `${pointerLabel(pointer)}: expected ${expected}, found ${found}`,
      reason: `expected ${expected}, found ${found}`,
      hint,
      details,
    };
    if ($type !== undefined) problem.$type = $type;
    this.problems.add(problem);
  }

  private walkChildren(container: object, node: SlotNode, d: number, nesting: number): void {
    const children = node.children;
    const path = this.path;
    for (let c = 0; c < children.length; c++) {
      const child = children[c];
      const seg = child.seg;
      if (seg === null) {
        if (Array.isArray(container)) {
          for (let i = 0; i < container.length; i++) {
            path[d] = i;
            this.visit(container[i], child, d + 1, nesting);
          }
        } else {
          const map = container as Record<string, unknown>;
          for (const key in map) {
            if (!hasOwn.call(map, key)) continue;
            path[d] = key;
            this.visit(map[key], child, d + 1, nesting);
          }
        }
      } else {
        if (child.guarded && !hasOwn.call(container, seg)) continue;
        const next = (container as Record<string, unknown>)[seg];
        if (next === undefined) continue;
        path[d] = seg;
        this.visit(next, child, d + 1, nesting);
      }
    }
  }

  private visit(value: unknown, node: SlotNode, d: number, nesting: number): void {
    if (node.family !== null) this.visitTagged(value, node.family, d, nesting);
    else if (node.children.length > 0 && typeof value === "object" && value !== null)
      this.walkChildren(value, node, d, nesting);
  }

  // -----------------------------------------------------------------------------------------------
  // ajv errors -> problems (error path only).

  /**
   * Reports why `value` failed its type's validator. Returns the pointers reported (to forget once
   * the value's nested values are walked), or null when there were none.
   */
  private schemaProblems(
    def: TypeDefinition,
    value: Record<string, unknown>,
    d: number,
    migratedFrom: string | undefined,
  ): string[] | null {
    const base = this.pointer(d);
    let errors = def.validate.errors;
    const report = this.registry.reportValidator(def);
    if (report !== def.validate && !report(value) && report.errors && report.errors.length > 0) errors = report.errors;
    const note =
      migratedFrom === undefined
        ? undefined
        : `the value was migrated from ${migratedFrom} to "${def.$type}" v${def.version} on load: check what the migrations produce`;
    const pointers: string[] = [];
    const schemaAt = (this.schemaAt ??= new Map());
    emitSchemaProblems(def, value, errors, base, (p) => {
      p.pointer = boundedPointer(p.pointer);
      if (note !== undefined) p.hint = p.hint === undefined ? note : `${p.hint}; ${note}`;
      this.problems.add(p);
      const seen = schemaAt.get(p.pointer);
      if (seen === undefined) pointers.push(p.pointer);
      schemaAt.set(p.pointer, (seen ?? 0) + 1);
    });
    return pointers.length > 0 ? pointers : null;
  }
}
