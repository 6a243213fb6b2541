/**
 * Emits `fused-check.ts`: one fused check per document root, from the same runtime schemas the ajv
 * validators are compiled from (generator/validators.ts). Only what depends on the types is
 * emitted; the generated module imports the rest, typed and written once, from the fused runtime
 * (src/runtime/checks/fused-runtime.ts): the context of a call (limits and counts), the limits
 * walk of opaque JSON, the character count of numbers and the session object's check (whose rules
 * are the validation walker's own, src/runtime/checks/session-rules.ts). The emitted code is
 * TypeScript checked like any other file: values are `any`, every helper call and count typed.
 *
 * A fused check is one recursive descent over a document that answers one question: would the long
 * path (the limits walk, then the SessionWalker dispatching every `$type` to its ajv validator)
 * accept this document exactly as it is, with nothing to migrate and nothing to preserve? It
 * returns true or false, never a reason: on false the caller runs the long path, which decides and
 * reports. So every rule here may be stricter than the long path (a false only costs time), never
 * looser:
 *
 * - tagged values: a `switch` on `$type` per family, only types at their latest version (anything
 *   older, newer, unknown, renamed or of another family is "no");
 * - closed objects (`additionalProperties: false`): one `for...in` whose `switch` on the key checks
 *   each property's type and counts the required ones; any other key is "no";
 * - formats with the runtime's own checks (src/runtime/registry/formats.ts): `date-time` with
 *   `isDateTime`, every other one through `formatTest` (ajv-formats' definitions, the ones the
 *   validators call), each applied to the values of its type only, as ajv does;
 * - the parse limits folded in: the depth of every container, the keys per object, `"__proto__"`
 *   keys (always "no": where it is legal data, the long path accepts it), finite numbers; the
 *   generic limits walk (`opaqueJson`) runs only inside opaque subtrees (an empty schema: `arguments`,
 *   `result`, `additionalProperties`, ...);
 * - every object key is counted (`ctx.keys`), for the duplicate-key check of the text;
 * - and so is a lower bound of the compact text of everything accepted (`ctx.chars`): each
 *   string's length plus its quotes, each key's plus quotes and colon, braces, brackets, commas,
 *   literals, the fewest characters any JSON number for a value can take. Per function in a local
 *   (`chars`), added to the context's count on the way out; a round integer that is a member's
 *   value (`1000`, which `1e3` also spells) adds what its digits take more to `ctx.plainExtra`, with
 *   its key, so the duplicate-key check can count it in full once it has seen it written so;
 * - `ctx.saving`: the value comes from the application, not `JSON.parse`: every object must also be
 *   a plain object without `toJSON` (what `checkWritableJson` asks), and `undefined` anywhere is "no".
 *
 * A schema using a keyword this emitter does not implement makes its type's check a constant
 * "no" (named in the generated comment): documents holding that type always take the long path.
 */
import { GENERATED_HEADER } from "./emit.js";
import { formatCheck, isKnownFormat } from "./runtime.js";
import type { Schema } from "./schemas.js";

export interface FusedInput {
  $type: string;
  family: string;
  version: number;
  /** The type's validator export name (`validateTextContent`): the check is `checkTextContent`. */
  validatorName: string;
  /** The runtime schema (family slots are empty schemas). */
  schema: Schema;
  slots: readonly { path: readonly string[]; family: string }[];
}

/** The family whose members sit under state-bag keys (`PROVIDER_STATE_FAMILY`). */
const SESSION_FAMILY = "ProviderState";

class Unsupported extends Error {}

interface SlotNode {
  family?: string;
  children: Map<string, SlotNode>;
}

function slotTree(slots: FusedInput["slots"]): SlotNode {
  const root: SlotNode = { children: new Map() };
  for (const slot of slots) {
    let node = root;
    for (const seg of slot.path) {
      let next = node.children.get(seg);
      if (next === undefined) node.children.set(seg, (next = { children: new Map() }));
      node = next;
    }
    node.family = slot.family;
  }
  return root;
}

/** Keywords that say nothing about the data. */
const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
  "examples",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
]);
const HANDLED = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "const",
  "enum",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "format",
  "pattern",
  "anyOf",
]);
const TYPES = ["string", "number", "integer", "boolean", "null", "array", "object"] as const;

function identifier(name: string): string {
  const id = name.replace(/[^A-Za-z0-9_$]/g, "_");
  return /^[0-9]/.test(id) ? `_${id}` : id;
}

function isPrimitive(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
}

/** The code of one function: its lines, fresh variable names, its deepest container offset and largest closed object. */
class FunctionBody {
  readonly lines: string[] = [];
  private n = 0;
  maxOffset = 0;
  maxClosedKeys = 0;
  usesNest = false;
  constructor(private readonly module: ModuleState) {}
  fresh(prefix: string): string {
    return `${prefix}${++this.n}`;
  }
  line(indent: number, text: string): void {
    this.lines.push("  ".repeat(indent) + text);
  }

  /**
   * Code that returns false unless `x` (an expression naming a variable) satisfies `schema`; `offset`:
   * the depth of `x` (when a container) relative to the function's `d`; `slot`: slot positions below;
   * `key`: when `x` is a member's value, an expression for its key (a number there is counted with it).
   */
  value(
    schema: Schema,
    x: string,
    offset: number,
    slot: SlotNode | undefined,
    indent: number,
    where: string,
    key?: string,
  ): void {
    if (typeof schema !== "object" || schema === null || Array.isArray(schema))
      throw new Unsupported(`a non-object schema at ${where}`);
    const keys = Object.keys(schema).filter((keyword) => !ANNOTATIONS.has(keyword));
    for (const keyword of keys)
      if (!HANDLED.has(keyword)) throw new Unsupported(`the keyword "${keyword}" at ${where}`);
    if (slot?.family !== undefined) {
      if (keys.length > 0 || slot.children.size > 0)
        throw new Unsupported(`a family slot with its own schema at ${where}`);
      this.usesNest = true;
      this.line(
        indent,
        `if (!${this.module.familyCheck(slot.family)}(ctx, ${x}, depth + ${offset}, nest + 1)) return false; // ${slot.family}`,
      );
      return;
    }
    if (keys.length === 0) {
      if (slot !== undefined && slot.children.size > 0)
        throw new Unsupported(`slots inside an empty schema at ${where}`);
      // Strings (most opaque values) counted here; the rest by \`opaqueJson\`.
      this.line(indent, `if (typeof ${x} === "string") chars += ${x}.length + 2;`);
      this.line(indent, `else if (!opaqueJson(ctx, ${x}, depth + ${offset})) return false;`);
      return;
    }
    if (schema.anyOf !== undefined) {
      if (keys.length !== 1 || !Array.isArray(schema.anyOf))
        throw new Unsupported(`anyOf next to other keywords at ${where}`);
      if (slot !== undefined && slot.children.size > 0) throw new Unsupported(`slots inside anyOf at ${where}`);
      const branches = (schema.anyOf as Schema[]).map((b, i) => this.module.branchFunction(b, `${where} (anyOf ${i})`));
      // A branch that says no may have counted opaque subtrees already: both counts go back.
      const saved = this.fresh("keys");
      const savedChars = this.fresh("chars");
      const savedExtra = this.fresh("extra");
      this.line(indent, `const ${saved} = ctx.keys;`);
      this.line(indent, `const ${savedChars} = ctx.chars;`);
      this.line(indent, `const ${savedExtra} = ctx.plainExtra;`);
      this.line(
        indent,
        `if (!(${branches.map((b) => `${b}(ctx, ${x}, depth + ${offset}) || ((ctx.keys = ${saved}), (ctx.chars = ${savedChars}), (ctx.plainExtra = ${savedExtra}), false)`).join(" || ")})) return false;`,
      );
      return;
    }
    if (schema.const !== undefined || schema.enum !== undefined) {
      const values: unknown[] = schema.const !== undefined ? [schema.const] : (schema.enum as unknown[]);
      if (!Array.isArray(values) || !values.every(isPrimitive))
        throw new Unsupported(`a non-primitive const/enum at ${where}`);
      this.line(indent, `if (${values.map((v) => `${x} !== ${JSON.stringify(v)}`).join(" && ")}) return false;`);
      // Every allowed value is a primitive of a known type: the remaining keywords only narrow them further.
      const rest = keys.filter((keyword) => keyword !== "const" && keyword !== "enum" && keyword !== "type");
      if (rest.length === 0) {
        if (schema.type === undefined || values.every((v) => typeAllows(schema.type, v))) {
          // Strings, booleans and null all of one size: a constant; else (numbers) counted as found.
          const sizes = new Set(values.map(constChars));
          if (sizes.size === 1 && !sizes.has(-1)) this.line(indent, `chars += ${[...sizes][0]};`);
          else this.line(indent, `if (ctx.counting) chars += scalarChars(${x});`);
          return;
        }
      }
    }
    const types = new Set<string>(
      schema.type === undefined
        ? TYPES
        : Array.isArray(schema.type)
          ? (schema.type as string[])
          : [schema.type as string],
    );
    for (const typeName of types)
      if (!(TYPES as readonly string[]).includes(typeName)) throw new Unsupported(`type "${typeName}" at ${where}`);
    const branches: { test: string; body: () => void }[] = [];
    if (types.has("string"))
      branches.push({
        test: `typeof ${x} === "string"`,
        body: () => this.stringKeywords(schema, x, indent + 1, where),
      });
    if (types.has("number") || types.has("integer")) {
      branches.push({
        test: types.has("number") ? `Number.isFinite(${x})` : `Number.isInteger(${x})`,
        body: () => {
          this.numberKeywords(schema, x, indent + 1, where);
          // Numbers only when the count is wanted (a load): the call is most of its cost.
          // A member's key goes with it: a round integer's digits may then count in full (`plainExtra`).
          this.line(
            indent + 1,
            `if (ctx.counting) chars += numberChars(${x}${key === undefined ? "" : `, ctx, ${key}`});`,
          );
        },
      });
    }
    if (types.has("boolean"))
      branches.push({ test: `typeof ${x} === "boolean"`, body: () => this.line(indent + 1, `chars += ${x} ? 4 : 5;`) });
    if (types.has("null")) branches.push({ test: `${x} === null`, body: () => this.line(indent + 1, "chars += 4;") });
    if (types.has("array"))
      branches.push({
        test: `Array.isArray(${x})`,
        body: () => this.arrayKeywords(schema, x, offset, slot, indent + 1, where),
      });
    if (types.has("object"))
      branches.push({
        test: `typeof ${x} === "object" && ${x} !== null && !Array.isArray(${x})`,
        body: () => this.objectKeywords(schema, x, offset, slot, indent + 1, where),
      });
    if (slot !== undefined && slot.children.size > 0 && !types.has("array") && !types.has("object"))
      throw new Unsupported(`slots below a scalar at ${where}`);
    if (branches.length === 1) {
      this.line(indent, `if (!(${branches[0].test})) return false;`);
      const before = this.lines.length;
      branches[0].body();
      // The body was written one level in: pull it back.
      for (let i = before; i < this.lines.length; i++) this.lines[i] = this.lines[i].slice(2);
      return;
    }
    branches.forEach((b, i) => {
      this.line(indent, `${i === 0 ? "if" : "} else if"} (${b.test}) {`);
      b.body();
    });
    this.line(indent, "} else return false;");
  }

  /** The format's check when it applies to values of `type` (undefined: no format, or one that accepts them all). */
  private formatFor(schema: Schema, type: "string" | "number", where: string): string | undefined {
    const name = schema.format;
    if (name === undefined) return undefined;
    if (typeof name !== "string" || !isKnownFormat(name))
      throw new Unsupported(`format ${JSON.stringify(name)} at ${where}`);
    if (name === "date-time") return type === "string" ? "isDateTime" : undefined;
    const check = formatCheck(name);
    return check?.type === type ? this.module.format(name) : undefined;
  }

  private stringKeywords(schema: Schema, x: string, indent: number, where: string): void {
    const format = this.formatFor(schema, "string", where);
    if (format !== undefined) this.line(indent, `if (!${format}(${x})) return false;`);
    if (schema.pattern !== undefined)
      this.line(indent, `if (!${this.module.pattern(String(schema.pattern))}.test(${x})) return false;`);
    this.line(indent, `chars += ${x}.length + 2;`);
  }

  private numberKeywords(schema: Schema, x: string, indent: number, where: string): void {
    const format = this.formatFor(schema, "number", where);
    if (format !== undefined) this.line(indent, `if (!${format}(${x})) return false;`);
    const bound = (keyword: string, op: string) => {
      const limit = schema[keyword];
      if (limit === undefined) return;
      if (typeof limit !== "number") throw new Unsupported(`a non-numeric ${keyword}`);
      this.line(indent, `if (${x} ${op} ${limit}) return false;`);
    };
    bound("minimum", "<");
    bound("maximum", ">");
    bound("exclusiveMinimum", "<=");
    bound("exclusiveMaximum", ">=");
  }

  private arrayKeywords(
    schema: Schema,
    x: string,
    offset: number,
    slot: SlotNode | undefined,
    indent: number,
    where: string,
  ): void {
    this.maxOffset = Math.max(this.maxOffset, offset);
    const items = schema.items === undefined ? {} : schema.items;
    if (Array.isArray(items)) throw new Unsupported(`tuple items at ${where}`);
    for (const seg of slot?.children.keys() ?? [])
      if (seg !== "*") throw new Unsupported(`a named slot segment "${seg}" on an array at ${where}`);
    const index = this.fresh("index");
    const item = this.fresh("item");
    this.line(indent, `for (let ${index} = 0; ${index} < ${x}.length; ${index}++) {`);
    this.line(indent + 1, `const ${item} = ${x}[${index}];`);
    this.value(items as Schema, item, offset + 1, slot?.children.get("*"), indent + 1, `${where}[*]`);
    this.line(indent, "}");
    // "[" and "]", a comma between items.
    this.line(indent, `chars += ${x}.length === 0 ? 2 : ${x}.length + 1;`);
  }

  private objectKeywords(
    schema: Schema,
    x: string,
    offset: number,
    slot: SlotNode | undefined,
    indent: number,
    where: string,
  ): void {
    this.maxOffset = Math.max(this.maxOffset, offset);
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    const names = Object.keys(props);
    const required = (schema.required ?? []) as string[];
    for (const name of required)
      if (!Object.hasOwn(props, name))
        throw new Unsupported(`required "${name}" without a property schema at ${where}`);
    for (const name of names)
      if (name === "__proto__") throw new Unsupported(`a property named "__proto__" at ${where}`);
    const additional =
      schema.additionalProperties === undefined || schema.additionalProperties === true
        ? {}
        : schema.additionalProperties;
    const closed = additional === false;
    const star = slot?.children.get("*");
    if (star !== undefined && names.length > 0)
      throw new Unsupported(`a "*" slot on an object with properties at ${where}`);
    for (const seg of slot?.children.keys() ?? [])
      if (seg !== "*" && !names.includes(seg))
        throw new Unsupported(`a slot on the undeclared property "${seg}" at ${where}`);
    if (closed) this.maxClosedKeys = Math.max(this.maxClosedKeys, names.length);
    const count = this.fresh("count");
    const seen = this.fresh("required");
    const key = this.fresh("key");
    const member = this.fresh("member");
    this.line(indent, `if (ctx.saving && !plainObject(${x})) return false;`);
    this.line(indent, `let ${count} = 0;`);
    if (required.length > 0) this.line(indent, `let ${seen} = 0;`);
    this.line(indent, `for (const ${key} in ${x}) {`);
    this.line(indent + 1, `${count}++;`);
    this.line(indent + 1, `const ${member} = ${x}[${key}];`);
    const otherwise = () => {
      if (closed) this.line(indent + 3, "return false;");
      else {
        this.line(indent + 3, `if (${key} === "__proto__") return false;`);
        this.line(indent + 3, `chars += ${key}.length + 3;`);
        this.value(additional as Schema, member, offset + 1, star, indent + 3, `${where}.*`, key);
      }
    };
    if (names.length === 0) {
      // No declared properties: every key takes the additional-properties schema.
      this.lines.push(
        ...(() => {
          const before = this.lines.length;
          otherwise();
          return this.lines.splice(before).map((line) => line.slice(4));
        })(),
      );
    } else {
      this.line(indent + 1, `switch (${key}) {`);
      // "$type" and "$version" first: writers put them first, and each case is one more compare.
      const tags: string[] = names.filter((name) => name === "$type" || name === "$version");
      for (const name of [...tags, ...names.filter((name) => !tags.includes(name))]) {
        this.line(indent + 2, `case ${JSON.stringify(name)}:`);
        // The key, its quotes and its colon.
        this.line(indent + 3, `chars += ${name.length + 3};`);
        this.value(
          props[name],
          member,
          offset + 1,
          slot?.children.get(name),
          indent + 3,
          `${where}.${name}`,
          JSON.stringify(name),
        );
        if (required.includes(name)) this.line(indent + 3, `${seen}++;`);
        this.line(indent + 3, "break;");
      }
      this.line(indent + 2, "default:");
      otherwise();
      this.line(indent + 1, "}");
    }
    this.line(indent, "}");
    if (required.length > 0) this.line(indent, `if (${seen} !== ${required.length}) return false;`);
    if (!closed) this.line(indent, `if (${count} > ctx.maxKeys) return false;`);
    this.line(indent, `ctx.keys += ${count};`);
    // "{" and "}", a comma between members.
    this.line(indent, `chars += ${count} === 0 ? 2 : ${count} + 1;`);
  }
}

/**
 * True when the type's own check already holds `$version` to the type's version: a declared
 * `$version` property whose schema is exactly that constant, required from version 2 on. Then the
 * family dispatch need not read `$version` too (a load that sees every member's shape).
 */
function checksOwnVersion(t: FusedInput): boolean {
  const schema = t.schema as Record<string, unknown>;
  const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
  const own = props?.$version;
  if (own === undefined || own.const !== t.version) return false;
  if (Object.keys(own).some((k) => k !== "const" && k !== "type" && !ANNOTATIONS.has(k))) return false;
  if (own.type !== undefined && own.type !== "integer" && own.type !== "number") return false;
  return t.version === 1 || ((schema.required as string[] | undefined) ?? []).includes("$version");
}

/**
 * The `$type`s a chat history holds most, in that order (bench/sessions.ts follows real transcripts):
 * their `case` comes first in the family dispatch, each `case` being one more compare for the
 * values below it. Any order decides the same; the rest stay sorted by `$type`.
 */
const DISPATCH_FIRST = ["text", "usage", "functionCall", "functionResult"];

function dispatchRank(t: FusedInput): number {
  const rank = DISPATCH_FIRST.indexOf(t.$type);
  return rank === -1 ? DISPATCH_FIRST.length : rank;
}

/** What a constant takes in the character count (a string: its length and quotes); -1: counted at run time. */
function constChars(v: unknown): number {
  if (typeof v === "string") return v.length + 2;
  if (v === null || v === true) return 4;
  if (v === false) return 5;
  // A one-digit integer has no shorter token; any other number is counted at run time.
  return Number.isInteger(v) && (v as number) >= 0 && (v as number) < 10 ? 1 : -1;
}

function typeAllows(type: unknown, v: unknown): boolean {
  const list = Array.isArray(type) ? (type as string[]) : [type as string];
  return list.some((t) => {
    switch (t) {
      case "string":
        return typeof v === "string";
      case "number":
        return typeof v === "number";
      case "integer":
        return Number.isInteger(v);
      case "boolean":
        return typeof v === "boolean";
      case "null":
        return v === null;
      default:
        return false;
    }
  });
}

class ModuleState {
  readonly patterns = new Map<string, string>();
  /** Formats other than `date-time` used here: name -> the module constant holding its check. */
  readonly formats = new Map<string, string>();
  readonly helpers: string[] = [];
  private branches = 0;
  constructor(readonly families: ReadonlySet<string>) {}
  familyCheck(family: string): string {
    if (!this.families.has(family)) throw new Unsupported(`the family "${family}" has no member here`);
    return `check${identifier(family)}`;
  }
  format(name: string): string {
    let id = this.formats.get(name);
    if (id === undefined) this.formats.set(name, (id = `format${this.formats.size}`));
    return id;
  }
  pattern(source: string): string {
    let name = this.patterns.get(source);
    if (name === undefined) this.patterns.set(source, (name = `pattern${this.patterns.size}`));
    return name;
  }
  /** A separate function for one `anyOf` branch: `(ctx, value, depth)`, true when `value` satisfies it. */
  branchFunction(schema: Schema, where: string): string {
    const name = `anyOf${this.branches++}`;
    const body = new FunctionBody(this);
    body.value(schema, "value", 0, undefined, 1, where);
    this.helpers.push(
      [
        `/** ${where} */`,
        `function ${name}(ctx: FusedContext, value: any, depth: number): boolean {`,
        `  ${entryGuard(body)}`,
        ...countedBody(body),
      ].join("\n"),
    );
    return name;
  }
}

/** The conservative limit test at a function's entry: its deepest container and largest closed object. */
function entryGuard(body: FunctionBody): string {
  const tests: string[] = [];
  tests.push(`depth + ${body.maxOffset} > ctx.maxDepth`);
  if (body.maxClosedKeys > 0) tests.push(`ctx.maxKeys < ${body.maxClosedKeys}`);
  return `if (${tests.join(" || ")}) return false;`;
}

/** A function's body with its character count: counted in a local, added to the context's on the way out. */
function countedBody(body: FunctionBody): string[] {
  return ["  let chars = 0;", ...body.lines, "  ctx.chars += chars;", "  return true;", "}"];
}

/** The signature of a generated check of a tagged value (`nest` unused: `_nest`, for strict projects). */
function taggedSignature(name: string, usesNest: boolean): string {
  return `function ${name}(ctx: FusedContext, value: any, depth: number, ${usesNest ? "nest" : "_nest"}: number): boolean {`;
}

/** A check that always says "no" (the long way decides): its parameters unused. */
function neverSignature(name: string): string {
  return `function ${name}(_ctx: FusedContext, _value: unknown, _depth: number, _nest: number): boolean {`;
}

export interface FusedOutput {
  code: string;
  /** Types whose check is a constant "no", with the reason. */
  unsupported: { $type: string; reason: string }[];
}

/** What the generated module may import from the fused runtime (src/runtime/checks/fused-runtime.ts). */
const RUNTIME_FUNCTIONS = [
  "checkSessionObject",
  "formatTest",
  "isDateTime",
  "opaqueJson",
  "numberChars",
  "plainObject",
  "scalarChars",
] as const;

/**
 * The fused check module. `runtimeImport`: the module it imports the fused runtime from (its
 * typed helpers and `FusedContext`); `regenerate`: the command named in its header.
 */
export function buildFusedCheck(inputs: readonly FusedInput[], runtimeImport: string, regenerate: string): FusedOutput {
  const sorted = [...inputs].sort((a, b) => (a.$type < b.$type ? -1 : a.$type > b.$type ? 1 : 0));
  const families = new Set(sorted.map((input) => input.family));
  const module = new ModuleState(families);
  const unsupported: FusedOutput["unsupported"] = [];
  const typeFunctions: string[] = [];
  const names = new Map<FusedInput, string>();
  for (const input of sorted) {
    const name = `check${input.validatorName.replace(/^validate/, "")}`;
    names.set(input, name);
    const body = new FunctionBody(module);
    const doc = `/** "${input.$type}" v${input.version} (${input.family}): the value at depth \`depth\`, \`nest\` tagged values deep. */`;
    try {
      const tree = slotTree(input.slots);
      body.value(input.schema, "value", 0, tree, 1, input.$type);
      const nested = input.slots.length > 0;
      const lines = [doc, taggedSignature(name, nested), `  ${entryGuard(body)}`];
      // The walker refuses to go into a type's slots `maxNesting` tagged values deep.
      if (nested) lines.push("  if (nest >= ctx.maxNesting) return false;");
      typeFunctions.push([...lines, ...countedBody(body)].join("\n"));
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
      unsupported.push({ $type: input.$type, reason: error.message });
      typeFunctions.push(
        [
          doc,
          `// Not fused (${error.message}): always the long way.`,
          neverSignature(name),
          "  return false;",
          "}",
        ].join("\n"),
      );
    }
  }

  const messageFunction = chatMessageFunction(sorted, module);

  const familyFunctions: string[] = [];
  for (const family of [...families].sort()) {
    const members = sorted.filter((input) => input.family === family).sort((a, b) => dispatchRank(a) - dispatchRank(b));
    const lines = [
      `/** A value of the ${family} family: dispatched on \`$type\`, each type at its latest version only. */`,
      taggedSignature(`check${identifier(family)}`, true),
      '  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;',
      "  switch (value.$type) {",
    ];
    for (const member of members) {
      const version = checksOwnVersion(member)
        ? ""
        : member.version === 1
          ? "(value.$version === undefined || value.$version === 1) && "
          : `value.$version === ${member.version} && `;
      lines.push(
        `    case ${JSON.stringify(member.$type)}:`,
        `      return ${version}${names.get(member)}(ctx, value, depth, nest);`,
      );
    }
    lines.push("    default:", "      return false;", "  }", "}");
    familyFunctions.push(lines.join("\n"));
  }

  const familyTable = [...families]
    .sort()
    .map((family) => `  [${JSON.stringify(family)}, check${identifier(family)}],`);
  const sessionEntry = families.has(SESSION_FAMILY)
    ? [
        "/** A session object at depth `depth` (1: a bare session; 2: inside the envelope; 3: in a `statebag.sessions` list). */",
        "export function checkSession(ctx: FusedContext, session: unknown, depth: number): boolean {",
        `  return checkSessionObject(ctx, session, depth, check${identifier(SESSION_FAMILY)});`,
        "}",
      ]
    : [
        `/** No ${SESSION_FAMILY} family here: no session is fused. */`,
        "export function checkSession(_ctx: FusedContext, _session: unknown, _depth: number): boolean {",
        "  return false;",
        "}",
      ];
  const checks = [
    ...[...module.patterns].map(([source, name]) => `const ${name} = new RegExp(${JSON.stringify(source)}, "u");`),
    ...[...module.formats].map(([format, name]) => `const ${name} = formatTest(${JSON.stringify(format)});`),
    "",
    ...familyFunctions.flatMap((code) => [code, ""]),
    ...typeFunctions.flatMap((code) => [code, ""]),
    messageFunction,
    "",
    ...module.helpers.flatMap((code) => [code, ""]),
    `const familyChecks = new Map<string, TaggedCheck>([`,
    ...familyTable,
    "]);",
    "",
    ...sessionEntry,
    "",
    "/** One chat message (a message-log entry) at depth `depth`: what a message in a history state is held to. */",
    "export function checkMessage(ctx: FusedContext, message: unknown, depth: number): boolean {",
    "  return checkChatMessage(ctx, message, depth, 0);",
    "}",
    "",
    "/** One tagged value of `family` at depth `depth`, `nesting` tagged values deep; false for a family with no member here. */",
    "export function checkTagged(ctx: FusedContext, value: unknown, family: string, depth: number, nesting: number): boolean {",
    "  const check = familyChecks.get(family);",
    "  return check !== undefined && check(ctx, value, depth, nesting);",
    "}",
    "",
    `/** Types whose check is a constant "no" (a schema keyword the emitter does not implement). */`,
    `export const unfusedTypes: readonly string[] = ${JSON.stringify(unsupported.map((entry) => entry.$type))};`,
    "",
  ].join("\n");
  // Only what the checks call (a strict project refuses unused imports).
  const used = RUNTIME_FUNCTIONS.filter((name) => new RegExp(`\\b${name}\\(`).test(checks));
  const imports = [...used, "type FusedContext", "type TaggedCheck"].join(", ");
  const out: string[] = [
    GENERATED_HEADER,
    `// Regenerate with \`${regenerate}\`. One fused check per document root (generator/fused-check.ts):`,
    "// true only when the long path (limits walk + validators + walker) would accept the value as it is,",
    "// with nothing to migrate or preserve; on false the caller takes the long path, which decides and reports.",
    "// Only what depends on the types is here: the rest (limits, counts, opaque JSON, the session object)",
    "// is the typed fused runtime it imports. Values are `any`: every function tests a value's type",
    "// before it reads it; the limits and counts of a call are in `ctx`.",
    `import { ${imports} } from ${JSON.stringify(runtimeImport)};`,
    "",
    checks,
  ];
  return { code: out.join("\n"), unsupported };
}

/**
 * Where the chat message schema lives: the items of this history state's `messages` (the schema
 * of `ChatMessage`, src/runtime/core/messages.ts). The three history states hold the same one.
 */
const MESSAGE_HOST = "InMemoryChatHistoryState";
const MESSAGE_TYPE = `${MESSAGE_HOST}.messages[*]`;

/**
 * `checkChatMessage(ctx, value, depth, nest)`: one message of a message log (a document root of
 * its own), held to exactly what a message inside a history state is held to: emitted by the same
 * `value` from the host's own item schema and slots, at the host's nesting (the state's `nest`,
 * contents one deeper). Without the host (a project's own types only): a constant "no".
 */
function chatMessageFunction(inputs: readonly FusedInput[], module: ModuleState): string {
  const host = inputs.find((input) => input.$type === MESSAGE_HOST);
  const doc = `/** A chat message (the items of "${MESSAGE_HOST}" v${host?.version ?? "-"} messages) at depth \`depth\`, \`nest\` tagged values deep. */`;
  const never = (reason: string) =>
    [
      doc,
      `// Not fused (${reason}): always the long way.`,
      neverSignature("checkChatMessage"),
      "  return false;",
      "}",
    ].join("\n");
  if (host === undefined) return never(`no "${MESSAGE_HOST}" here`);
  const messages = (host.schema.properties as Record<string, Schema> | undefined)?.messages;
  const items = messages?.items;
  if (typeof items !== "object" || items === null || Array.isArray(items))
    return never(`"${MESSAGE_HOST}" has no message item schema`);
  const body = new FunctionBody(module);
  try {
    const slot = slotTree(host.slots).children.get("messages")?.children.get("*");
    body.value(items as Schema, "value", 0, slot, 1, MESSAGE_TYPE);
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    // The host's own check is a constant "no" then too (and listed in `unfusedTypes`).
    return never(error.message);
  }
  const lines = [doc, taggedSignature("checkChatMessage", body.usesNest), `  ${entryGuard(body)}`];
  // The host checks this before walking its messages' contents; so does a message on its own.
  if (body.usesNest) lines.push("  if (nest >= ctx.maxNesting) return false;");
  return [...lines, ...countedBody(body)].join("\n");
}
