/**
 * The validation walker: checks a session against a type registry.
 *
 * - The session envelope: `id` (non-empty string), `stateBag` (object), `kind` (`local`|`hosted`),
 *   `conversationId` (string, or an object of strings); no other keys.
 * - Every state bag value is dispatched by its `$type` (a `Map` lookup, wherever the key sits in
 *   the object) to that type's own compiled validator, then the walker follows the type's `slots`
 *   to the nested polymorphic values (message contents, annotations, ...) and dispatches each of
 *   those the same way. One validator per type, never one big union.
 * - A value whose `$type` the registry does not know, or whose version is newer than the registry
 *   knows, is kept verbatim and reported in `preserved` (an error with `strict: true`).
 * - A value older than the latest version is upgraded by the registry's migrations before it is
 *   validated (the upgraded value is checked; `validateSession` never modifies its input); with no
 *   migration it is an error naming the type and both versions.
 * - All problems are collected, each with a JSON pointer from the document root.
 *
 * Hot path: no allocation per value (the current path lives in one reused array; pointers and
 * messages are built only when something is reported), no closures per call, slot paths compiled
 * once per type into straight-line code (`SlotWalk`, with the generic `walkChildren` as fallback).
 * On the error path only, a failing value is re-checked by an `allErrors` validator compiled from
 * its type's schema, so generated validators (which stop at the first error) still yield every
 * problem of the value.
 */
import { pointerSegment } from "../core/errors.js";
import { MigrationError } from "./migrations.js";
import { shortPointer } from "./safe-json.js";
import { PROVIDER_STATE_FAMILY, defaultRegistry, type RegistryEntry, type SlotNode, type SlotVisitor, type TypeRegistry } from "./registry.js";
import type { TypeDefinition, ValidatorError } from "./registry-types.js";

export type ProblemCode =
  /** The text is not acceptable JSON (syntax, size, depth, keys, `__proto__`). */
  | "json"
  /** The stored envelope (`format`, `formatVersion`, `session`/`sessions`). */
  | "envelope"
  /** A value cannot be written as JSON (a cycle, a BigInt, nesting too deep). */
  | "not-json"
  /** The session object itself (id, stateBag, kind, conversationId, unknown keys). */
  | "session"
  /** A tagged position holds something that is not an object. */
  | "not-tagged"
  /** An object in a tagged position has no `$type`, or a non-string one. */
  | "missing-type"
  /** `$version` is not an integer >= 1. */
  | "invalid-version"
  /** Unknown `$type` (strict mode only; otherwise preserved). */
  | "unknown-type"
  /** Version newer than the registry knows (strict mode only; otherwise preserved). */
  | "newer-version"
  /** Older version with no migration path. */
  | "old-version"
  /** A migration step failed. */
  | "migration-failed"
  /** The `$type` belongs to another family than the position expects. */
  | "wrong-family"
  /** The type's schema rejected the value. */
  | "schema"
  /** Tagged values nested deeper than the walker allows (or a cycle). */
  | "too-deep";

export interface ValidationProblem {
  code: ProblemCode;
  /** JSON pointer (RFC 6901) from the document root. */
  pointer: string;
  /** The `$type` of the innermost tagged value the problem is in, when there is one. */
  $type?: string;
  /** What should be there. */
  expected: string;
  /** What is there. */
  found: string;
  /** One readable sentence. */
  message: string;
  /** How to fix it. */
  hint?: string;
}

/** A value kept verbatim because this registry cannot read it (not an error unless strict). */
export interface PreservedValue {
  pointer: string;
  $type: string;
  version: number;
  reason: "unknown-type" | "newer-version";
  message: string;
}

export interface ValidationResult {
  ok: boolean;
  problems: ValidationProblem[];
  preserved: PreservedValue[];
}

export interface ValidateOptions {
  /** Default: `defaultRegistry()`. */
  registry?: TypeRegistry;
  /** Unknown types and newer versions are errors instead of preserved values. Default false. */
  strict?: boolean;
  /** Maximum nesting of tagged values inside tagged values (guards cycles in in-memory data). Default 128. */
  maxNesting?: number;
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
 * Validates a session (envelope shape, every state value, every nested tagged value). Never
 * throws for bad data and never modifies `session`.
 */
export function validateSession(session: unknown, options: ValidateOptions = {}): ValidationResult {
  const walker = new SessionWalker({ registry: options.registry ?? defaultRegistry(), strict: options.strict, maxNesting: options.maxNesting });
  walker.walkSession(session, EMPTY_PATH);
  return walker.result();
}

const EMPTY_PATH: readonly (string | number)[] = [];

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
  const walker = new SessionWalker({ registry: options.registry ?? defaultRegistry(), strict: options.strict, maxNesting: options.maxNesting });
  walker.walkValue(value, options.family ?? PROVIDER_STATE_FAMILY, options.path ?? EMPTY_PATH);
  return walker.result();
}

/** @internal The walker behind `validateSession` and the (de)serializers. One instance per call. */
export class SessionWalker implements SlotVisitor {
  readonly problems: ValidationProblem[] = [];
  readonly preserved: PreservedValue[] = [];
  /** Upgraded values to write back (null when the caller only validates). */
  readonly upgrades: PendingUpgrade[] | null;
  private readonly table: ReadonlyMap<string, RegistryEntry>;
  private readonly path: (string | number)[] = [];
  private readonly maxNesting: number;
  /** Pointers where the walker itself reported a tag problem (ajv's report on the same spot is dropped). */
  private tagProblemPointers: Set<string> | null = null;

  private readonly registry: TypeRegistry;
  private readonly strict: boolean;
  /** False: check the session object and the tags of its state values only (no registry lookups). */
  private readonly deep: boolean;

  /** Use the generic slot walk even where a compiled one exists (for tests). */
  private readonly generic: boolean;

  /** The document was parsed by the caller and is discarded on error: migrations need not copy values first. */
  private readonly owned: { owned: boolean } | undefined;

  constructor(options: { registry: TypeRegistry; strict?: boolean; collectUpgrades?: boolean; maxNesting?: number; deep?: boolean; genericWalk?: boolean; ownedInput?: boolean }) {
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
    let problems = this.problems;
    const tagged = this.tagProblemPointers;
    if (tagged !== null) problems = problems.filter((p) => p.code !== "schema" || !tagged.has(p.pointer));
    return { ok: problems.length === 0, problems, preserved: this.preserved };
  }

  /** Walks one session; `base` is its path from the document root (e.g. `["session"]`). */
  walkSession(session: unknown, base: readonly (string | number)[]): void {
    const path = this.path;
    const d = base.length;
    for (let i = 0; i < d; i++) path[i] = base[i];
    if (typeof session !== "object" || session === null || Array.isArray(session)) {
      this.sessionProblem(d, "a session object ({ id, stateBag, ... })", describeValue(session), "the session must be a JSON object");
      return;
    }
    const s = session as Record<string, unknown>;
    let bag: unknown;
    let sawId = false;
    let sawBag = false;
    for (const key in s) {
      if (!hasOwn.call(s, key)) continue;
      const value = s[key];
      if (value === undefined) continue;
      switch (key) {
        case "id":
          sawId = true;
          if (typeof value !== "string" || value.length === 0) {
            path[d] = "id";
            this.sessionProblem(d + 1, "a non-empty string", describeValue(value), "session.id is the stable id the session is stored under");
          }
          break;
        case "stateBag":
          sawBag = true;
          bag = value;
          break;
        case "kind":
          if (value !== "local" && value !== "hosted") {
            path[d] = "kind";
            this.sessionProblem(d + 1, '"local" or "hosted" (or no kind)', describeValue(value), "omit kind while it is not decided yet");
          }
          break;
        case "conversationId":
          this.checkConversationId(value, d);
          break;
        default:
          path[d] = key;
          this.sessionProblem(d + 1, "no such property (a session has id, kind, conversationId, stateBag)", describeValue(value), `remove "${key}"; state belongs in the state bag under a provider key`, `unknown session property "${key}"`);
      }
    }
    if (!sawId) {
      path[d] = "id";
      this.sessionProblem(d + 1, "a non-empty string", "nothing (the property is missing)", "every session has an id", 'the session has no "id"');
    }
    if (!sawBag) {
      path[d] = "stateBag";
      this.sessionProblem(d + 1, "an object of provider key -> state", "nothing (the property is missing)", "an empty session has stateBag: {}", 'the session has no "stateBag"');
      return;
    }
    if (typeof bag !== "object" || bag === null || Array.isArray(bag)) {
      path[d] = "stateBag";
      this.sessionProblem(d + 1, "an object of provider key -> state", describeValue(bag), "stateBag maps each provider key to that provider's $type-tagged state");
      return;
    }
    path[d] = "stateBag";
    const b = bag as Record<string, unknown>;
    for (const key in b) {
      if (!hasOwn.call(b, key)) continue;
      path[d + 1] = key;
      if (this.deep) this.visitTagged(b[key], PROVIDER_STATE_FAMILY, d + 2, 0);
      else this.tagOnly(b[key], PROVIDER_STATE_FAMILY, d + 2);
    }
  }

  /** Walks one tagged value of `family`; `base` is its path from the document root. */
  walkValue(value: unknown, family: string, base: readonly (string | number)[]): void {
    const path = this.path;
    const d = base.length;
    for (let i = 0; i < d; i++) path[i] = base[i];
    if (this.deep) this.visitTagged(value, family, d, 0);
    else this.tagOnly(value, family, d);
  }

  private checkConversationId(value: unknown, d: number): void {
    if (typeof value === "string") return;
    const path = this.path;
    path[d] = "conversationId";
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      for (const k in value) {
        if (!hasOwn.call(value, k)) continue;
        const v = (value as Record<string, unknown>)[k];
        if (typeof v !== "string") {
          path[d + 1] = k;
          this.sessionProblem(d + 2, "a string", describeValue(v), "conversationId is a string, or an object of named string ids");
        }
      }
      return;
    }
    this.sessionProblem(d + 1, "a string, or an object of named string ids", describeValue(value), "omit conversationId for a session whose history is kept locally");
  }

  private sessionProblem(d: number, expected: string, found: string, hint: string, message?: string): void {
    const pointer = this.pointer(d);
    this.problems.push({ code: "session", pointer, expected, found, message: message ?? `${pointerLabel(pointer)} must be ${expected}, found ${found}`, hint });
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
      this.tagProblem(d, "not-tagged", `an object with "$type" (${family} family)`, describeValue(value), undefined, `positions of the ${family} family hold "$type"-tagged objects`);
      return;
    }
    const t = (value as Record<string, unknown>).$type;
    if (typeof t !== "string") {
      this.tagProblem(d, "missing-type", `a "$type" string naming a type of the ${family} family`, t === undefined ? 'an object without "$type"' : `"$type": ${describeValue(t)}`, undefined, `every ${family} value carries "$type"`);
      return;
    }
    const v = (value as Record<string, unknown>).$version;
    if (v !== undefined && !(typeof v === "number" && Number.isInteger(v) && v >= 1)) {
      this.tagProblem(d, "invalid-version", "an integer >= 1 (or no $version, meaning 1)", describeValue(v), t, "$version counts versions of the type: 1, 2, 3, ...");
    }
  }

  // -----------------------------------------------------------------------------------------------
  // The hot part: one tagged value.

  /** @internal One tagged value of `family` at depth `d`. Also called by compiled slot walks (`SlotWalk`). */
  visitTagged(value: unknown, family: string, d: number, nesting: number): void {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.tagProblem(d, "not-tagged", `an object with "$type" (${family} family)`, describeValue(value), undefined, `positions of the ${family} family hold "$type"-tagged objects`);
      return;
    }
    let v = value as Record<string, unknown>;
    const t = v.$type;
    if (typeof t !== "string") {
      this.tagProblem(
        d,
        "missing-type",
        `a "$type" string naming a type of the ${family} family`,
        t === undefined ? "an object without \"$type\"" : `"$type": ${describeValue(t)}`,
        undefined,
        t === undefined ? `every ${family} value carries "$type" (it may sit anywhere among the keys)` : '"$type" must be a string id',
      );
      return;
    }
    const rawVersion = v.$version;
    let version = 1;
    if (rawVersion !== undefined) {
      if (typeof rawVersion === "number" && Number.isInteger(rawVersion) && rawVersion >= 1) version = rawVersion;
      else {
        this.tagProblem(d, "invalid-version", "an integer >= 1 (or no $version, meaning 1)", describeValue(rawVersion), t, "$version counts versions of the type: 1, 2, 3, ...");
        return;
      }
    }
    let entry = this.table.get(t);
    let migratedFrom: string | undefined;
    if (entry === undefined || version !== entry.def.version || entry.def.family !== family) {
      const next = this.slowPath(v, t, version, entry, family, d);
      if (next === undefined) return;
      entry = next;
      if (this.lastUpgraded !== undefined) {
        v = this.lastUpgraded;
        migratedFrom = `"${t}" v${version}`;
        this.lastUpgraded = undefined;
      }
    }
    const def = entry.def;
    if (!def.validate(v)) this.schemaProblems(def, v, d, migratedFrom);
    const tree = entry.slotTree;
    if (tree !== null) {
      if (nesting >= this.maxNesting) {
        this.tagProblem(d, "too-deep", `at most ${this.maxNesting} levels of nested tagged values`, "deeper nesting (or a cycle)", t, "tagged values are nested too deeply; is there a reference cycle in the data?");
        return;
      }
      const walk = entry.slotWalk;
      if (walk !== null && !this.generic) walk(this, v, d, nesting + 1, this.path);
      else this.walkChildren(v, tree, d, nesting + 1);
    }
  }


  private lastUpgraded: Record<string, unknown> | undefined = undefined;

  /**
   * Unknown type, wrong family, or a version other than the latest. Returns the entry to validate
   * against (setting `lastUpgraded` when the value was migrated), or undefined to stop here.
   */
  private slowPath(v: Record<string, unknown>, t: string, version: number, entry: RegistryEntry | undefined, family: string, d: number): RegistryEntry | undefined {
    if (entry !== undefined && entry.def.family !== family) {
      this.wrongFamily(d, t, entry.def.family, family);
      return undefined;
    }
    if (entry !== undefined && version > entry.def.version) {
      const pointer = this.pointer(d);
      const message = `"${t}" v${version} at ${pointerLabel(pointer)} is newer than this registry's v${entry.def.version}`;
      if (this.strict) {
        this.problems.push({ code: "newer-version", pointer, $type: t, expected: `"${t}" at v${entry.def.version} or older`, found: `v${version}`, message, hint: "upgrade the code (or statebag) that reads this document, or load without strict to keep the value verbatim" });
      } else {
        this.preserved.push({ pointer, $type: t, version, reason: "newer-version", message: `${message}; kept verbatim` });
      }
      return undefined;
    }
    // needsUpgrade covers former names (renames) and types only migrations still read.
    if (entry === undefined && !this.registry.needsUpgrade(v as { $type: string })) {
      const pointer = this.pointer(d);
      const message = `"$type": "${t}" at ${pointerLabel(pointer)} is not a registered type`;
      if (this.strict) {
        this.problems.push({ code: "unknown-type", pointer, $type: t, expected: `a registered ${family} type`, found: `"$type": ${JSON.stringify(t)}`, message, hint: "register the type (npm run gen, or registry.register(...)), or load without strict to keep it verbatim" });
      } else {
        this.preserved.push({ pointer, $type: t, version, reason: "unknown-type", message: `${message}; kept verbatim` });
      }
      return undefined;
    }
    // Older version, or a former name: migrate.
    const pointer = this.pointer(d);
    let upgraded: Record<string, unknown>;
    try {
      upgraded = this.registry.upgrade<Record<string, unknown>>(v as { $type: string }, pointer, this.owned);
    } catch (err) {
      if (!(err instanceof MigrationError)) throw err;
      const noStep = err.reason === "no-step";
      const latest = entry?.def.version;
      this.problems.push({
        code: noStep ? "old-version" : "migration-failed",
        pointer,
        $type: t,
        expected: latest !== undefined ? `"${t}" v${latest}, or a migration from v${version}` : `a migration from "${t}" v${version}`,
        found: `"${t}" v${version}`,
        // The migration error names the full pointer: shorten it like every other message.
        message: pointer === "" ? err.message.split("\n")[0] : err.message.split("\n")[0].replace(pointer, () => pointerLabel(pointer)),
        hint: err.hint,
      });
      return undefined;
    }
    const newType = upgraded.$type as string;
    const target = this.table.get(newType);
    if (target === undefined) {
      // Cannot happen: the runner stops only at a registered latest version.
      this.tagProblem(d, "migration-failed", "a registered type after migration", `"$type": "${newType}"`, t, "check the migration chain's targets");
      return undefined;
    }
    if (target.def.family !== family) {
      this.wrongFamily(d, newType, target.def.family, family);
      return undefined;
    }
    if (this.upgrades !== null) this.upgrades.push({ path: this.path.slice(0, d), value: upgraded, fromType: t, from: version });
    this.lastUpgraded = upgraded;
    return target;
  }

  private wrongFamily(d: number, t: string, actual: string, expected: string): void {
    this.tagProblem(d, "wrong-family", `a value of the ${expected} family`, `"$type": "${t}" (${actual} family)`, t, `"${t}" is registered in the ${actual} family and cannot stand where a value of the ${expected} family belongs`);
  }

  private tagProblem(d: number, code: ProblemCode, expected: string, found: string, $type: string | undefined, hint: string): void {
    const pointer = this.pointer(d);
    (this.tagProblemPointers ??= new Set()).add(pointer);
    const problem: ValidationProblem = { code, pointer, expected, found, message: `${pointerLabel(pointer)}: expected ${expected}, found ${found}`, hint };
    if ($type !== undefined) problem.$type = $type;
    this.problems.push(problem);
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
          for (const k in map) {
            if (!hasOwn.call(map, k)) continue;
            path[d] = k;
            this.visit(map[k], child, d + 1, nesting);
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
    else if (node.children.length > 0 && typeof value === "object" && value !== null) this.walkChildren(value, node, d, nesting);
  }

  // -----------------------------------------------------------------------------------------------
  // ajv errors -> problems (error path only).

  private schemaProblems(def: TypeDefinition, value: Record<string, unknown>, d: number, migratedFrom: string | undefined): void {
    const base = this.pointer(d);
    let errors = def.validate.errors;
    const report = this.registry.reportValidator(def);
    if (report !== def.validate && !report(value) && report.errors && report.errors.length > 0) errors = report.errors;
    const found: ValidationProblem[] = [];
    if (!errors || errors.length === 0) {
      found.push({ code: "schema", pointer: base, $type: def.$type, expected: `a valid "${def.$type}" v${def.version}`, found: describeValue(value), message: `${pointerLabel(base)} is not a valid "${def.$type}" v${def.version}` });
    } else {
      for (const e of reduceAjvErrors(errors)) found.push(problemFromAjv(e, base, value, def));
    }
    for (const p of found) {
      if (migratedFrom !== undefined) {
        const note = `the value was migrated from ${migratedFrom} to "${def.$type}" v${def.version} on load: check what the migrations produce`;
        p.hint = p.hint === undefined ? note : `${p.hint}; ${note}`;
      }
      this.problems.push(p);
    }
  }
}

// -------------------------------------------------------------------------------------------------
// Helpers for reports.

/** A pointer for a message (long ones, from deep nesting, cut in the middle as in parse errors). */
function pointerLabel(pointer: string): string {
  return pointer === "" ? "the document root" : shortPointer(pointer);
}

/** A short, safe description of a JSON value for messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 37) + "..." : value)}`;
    case "number":
      return `number ${value}`;
    case "boolean":
      return `boolean ${value}`;
    case "object": {
      if (Array.isArray(value)) return value.length === 0 ? "an empty array" : `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
      const t = hasOwn.call(value, "$type") ? (value as { $type: unknown }).$type : undefined;
      if (typeof t === "string") return `an object with "$type": ${JSON.stringify(t)}`;
      const keys = Object.keys(value);
      if (keys.length === 0) return "an empty object";
      return `an object with keys ${keys.slice(0, 5).map((k) => JSON.stringify(k)).join(", ")}${keys.length > 5 ? ", ..." : ""}`;
    }
    default:
      return `a ${typeof value} (not JSON)`;
  }
}

function unescapeSegment(s: string): string {
  return s.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Reads the value at an ajv `instancePath` (own properties only). */
function resolveInstancePath(root: unknown, instancePath: string): unknown {
  if (instancePath === "") return root;
  let node: unknown = root;
  for (const raw of instancePath.slice(1).split("/")) {
    const seg = unescapeSegment(raw);
    if (typeof node !== "object" || node === null || !hasOwn.call(node, seg)) return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}

/** Reads a node of a schema by an ajv `schemaPath` (`#/properties/x/type`). */
function resolveSchemaPath(schema: unknown, schemaPath: string): unknown {
  if (!schemaPath.startsWith("#")) return undefined;
  let node: unknown = schema;
  for (const raw of schemaPath.slice(2).split("/")) {
    if (raw === "") continue;
    const seg = unescapeSegment(decodeURIComponent(raw));
    if (typeof node !== "object" || node === null || !hasOwn.call(node, seg)) return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}

function parentSchemaPath(schemaPath: string): string {
  const i = schemaPath.lastIndexOf("/");
  return i < 0 ? schemaPath : schemaPath.slice(0, i);
}

/**
 * With `allErrors`, a failed `anyOf`/`oneOf` reports every branch's errors plus its own. Keep
 * one report per alternative set: the branch errors when they all sit at the alternative's own
 * position (merged into one "expected a or b"), else the branch that got furthest into the data.
 */
function reduceAjvErrors(errors: readonly ValidatorError[]): ValidatorError[] {
  const combinators = errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf");
  if (combinators.length === 0) return errors.filter((e) => e.keyword !== "if");
  const dropped = new Set<ValidatorError>();
  const added: ValidatorError[] = [];
  for (const c of combinators) {
    if (dropped.has(c)) continue;
    const prefix = c.schemaPath + "/";
    const branch = errors.filter((e) => e !== c && e.schemaPath.startsWith(prefix) && e.instancePath.startsWith(c.instancePath));
    if (branch.length === 0) continue;
    for (const e of branch) dropped.add(e);
    if (branch.every((e) => e.instancePath === c.instancePath && (e.keyword === "type" || e.keyword === "const" || e.keyword === "enum"))) {
      const wanted = [...new Set(branch.map(expectedOf))];
      dropped.add(c);
      added.push({ ...c, keyword: "anyOf", params: { ...c.params, expected: wanted.join(" or ") } });
      continue;
    }
    // The branch whose errors reach deepest into the data is most likely the one intended.
    const byBranch = new Map<string, ValidatorError[]>();
    for (const e of branch) {
      const idx = e.schemaPath.slice(prefix.length).split("/")[0];
      const list = byBranch.get(idx) ?? [];
      list.push(e);
      byBranch.set(idx, list);
    }
    let best: ValidatorError[] = [];
    let bestDepth = -1;
    for (const list of byBranch.values()) {
      const depth = Math.max(...list.map((e) => e.instancePath.split("/").length));
      if (depth > bestDepth) {
        bestDepth = depth;
        best = list;
      }
    }
    if (bestDepth > c.instancePath.split("/").length) {
      dropped.add(c);
      for (const e of best) dropped.delete(e);
    }
  }
  return [...errors.filter((e) => !dropped.has(e) && e.keyword !== "if"), ...added];
}

function expectedOf(e: ValidatorError): string {
  const p = e.params;
  switch (e.keyword) {
    case "type":
      return String(p.type).split(",").join(" or ");
    case "const":
      return JSON.stringify(p.allowedValue);
    case "enum":
      return `one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return e.message ?? e.keyword;
  }
}

const FORMAT_EXAMPLES: Record<string, string> = {
  "date-time": 'ISO-8601 with an offset, e.g. "2025-01-31T12:00:00Z" or "2025-01-31T12:00:00+02:00" (and a real calendar day)',
  date: 'e.g. "2025-01-31"',
  uri: 'an absolute URI, e.g. "https://example.com/a"',
  email: 'e.g. "name@example.com"',
  uuid: 'e.g. "3f1c2a4e-1111-4222-8333-944455556666"',
};

function problemFromAjv(e: ValidatorError, base: string, value: unknown, def: TypeDefinition): ValidationProblem {
  const p = e.params ?? {};
  const at = resolveInstancePath(value, e.instancePath);
  const typeLabel = `"${def.$type}" v${def.version}`;
  let pointer = base + e.instancePath;
  let expected: string;
  let found = describeValue(at);
  let message: string;
  let hint: string | undefined;
  switch (e.keyword) {
    case "required": {
      const name = String(p.missingProperty);
      pointer += "/" + pointerSegment(name);
      expected = `property "${name}"`;
      found = "nothing (the property is missing)";
      message = `${pointerLabel(pointer)}: required property "${name}" is missing`;
      hint = `${typeLabel} requires "${name}"`;
      break;
    }
    case "additionalProperties": {
      const name = String(p.additionalProperty);
      pointer += "/" + pointerSegment(name);
      const parent = resolveSchemaPath(def.schema, parentSchemaPath(e.schemaPath)) as { properties?: Record<string, unknown> } | undefined;
      const allowed = parent?.properties ? Object.keys(parent.properties) : [];
      expected = allowed.length > 0 ? `only ${allowed.slice(0, 12).map((k) => JSON.stringify(k)).join(", ")}${allowed.length > 12 ? ", ..." : ""}` : "no other properties";
      found = `property "${name}" (${describeValue(resolveInstancePath(at, "/" + pointerSegment(name)))})`;
      message = `${pointerLabel(pointer)}: unknown property "${name}" in ${typeLabel}`;
      hint = `${typeLabel} has a closed model: remove "${name}", or declare it in the type (and bump the version if older readers must not see it)`;
      break;
    }
    case "anyOf":
    case "oneOf": {
      expected = typeof p.expected === "string" ? p.expected : `a value matching ${e.keyword === "oneOf" ? "exactly " : ""}one of the alternatives`;
      message = `${pointerLabel(pointer)} must be ${expected}, found ${found}`;
      break;
    }
    case "format": {
      const fmt = String(p.format);
      expected = `a "${fmt}" string`;
      message = `${pointerLabel(pointer)} must be a valid ${fmt}, found ${found}`;
      hint = FORMAT_EXAMPLES[fmt] ? `${fmt}: ${FORMAT_EXAMPLES[fmt]}` : undefined;
      break;
    }
    case "pattern":
      expected = `a string matching /${String(p.pattern)}/`;
      message = `${pointerLabel(pointer)} must match /${String(p.pattern)}/, found ${found}`;
      break;
    case "type":
    case "const":
    case "enum":
      expected = expectedOf(e);
      message = `${pointerLabel(pointer)} must be ${expected}, found ${found}`;
      break;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      expected = `a number ${String(p.comparison)} ${String(p.limit)}`;
      message = `${pointerLabel(pointer)} must be ${expected}, found ${found}`;
      break;
    default:
      expected = e.message ? e.message.replace(/^must (be )?/, "") : e.keyword;
      message = `${pointerLabel(pointer)} ${e.message ?? `fails "${e.keyword}"`}, found ${found}`;
  }
  const problem: ValidationProblem = { code: "schema", pointer, $type: def.$type, expected, found, message };
  if (hint !== undefined) problem.hint = hint;
  return problem;
}

/** Formats problems as readable lines: what, where, hint. At most `limit` are listed. */
export function formatProblems(problems: readonly ValidationProblem[], limit = 20): string {
  const lines: string[] = [];
  problems.slice(0, limit).forEach((p, i) => {
    lines.push(`  ${i + 1}. ${p.message}${p.$type !== undefined && !p.message.includes(`"${p.$type}"`) ? ` (in "${p.$type}")` : ""}`);
    if (!(p.message.includes(p.expected) && p.message.includes(p.found))) lines.push(`     expected ${p.expected}; found ${p.found}`);
    if (p.hint) lines.push(`     hint: ${p.hint}`);
  });
  if (problems.length > limit) lines.push(`  ... and ${problems.length - limit} more (see error.problems)`);
  return lines.join("\n");
}

