/**
 * Emits `fused-check.ts`: one fused check per document root, from the same runtime schemas the ajv
 * validators are compiled from (generator/validators.ts).
 *
 * A fused check is one recursive descent over a document that answers one question: would today's
 * path (the limits walk, then the SessionWalker dispatching every `$type` to its ajv validator)
 * accept this document exactly as it is, with nothing to migrate and nothing to preserve? It
 * returns true or false, never a reason: on false the caller runs today's path, which decides and
 * reports. So every rule here may be stricter than today's path (a false only costs time), never
 * looser:
 *
 * - tagged values: a `switch` on `$type` per family, only types at their latest version (anything
 *   older, newer, unknown, renamed or of another family is "no");
 * - closed objects (`additionalProperties: false`): one `for...in` whose `switch` on the key checks
 *   each property's type and counts the required ones; any other key is "no";
 * - formats with the runtime's own checks (src/runtime/registry/formats.ts): `date-time` with
 *   `isDateTime`, every other one through `formatCheck` (ajv-formats' definitions, the ones the
 *   validators call), each applied to the values of its type only, as ajv does;
 * - the parse limits folded in: the depth of every container, the keys per object, `"__proto__"`
 *   keys (always "no": where it is legal data, today's path accepts it), finite numbers; the
 *   generic limits walk (`json`) runs only inside opaque subtrees (an empty schema: `arguments`,
 *   `result`, `additionalProperties`, ...);
 * - every object key is counted (`keyCount()`), for the duplicate-key check of the text;
 * - and so is a lower bound of the compact text of everything accepted (`charCount()`): each
 *   string's length plus its quotes, each key's plus quotes and colon, braces, brackets, commas,
 *   literals, the fewest characters any JSON number for a value can take. Per function in a local
 *   (`c`), added to the module's count on the way out. Undercounting only costs time (the text
 *   check falls back to the colon scan); counting more than the text must hold would be unsound;
 * - `saving`: the value comes from the application, not `JSON.parse`: every object must also be a
 *   plain object without `toJSON` (what `checkWritableJson` asks), and `undefined` anywhere is "no".
 *
 * A schema using a keyword this emitter does not implement makes its type's check a constant
 * "no" (named in the generated comment): documents holding that type always take today's path.
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
   * the depth of `x` (when a container) relative to the function's `d`; `slot`: slot positions below.
   */
  value(schema: Schema, x: string, offset: number, slot: SlotNode | undefined, indent: number, where: string): void {
    if (typeof schema !== "object" || schema === null || Array.isArray(schema))
      throw new Unsupported(`a non-object schema at ${where}`);
    const keys = Object.keys(schema).filter((k) => !ANNOTATIONS.has(k));
    for (const k of keys) if (!HANDLED.has(k)) throw new Unsupported(`the keyword "${k}" at ${where}`);
    if (slot?.family !== undefined) {
      if (keys.length > 0 || slot.children.size > 0)
        throw new Unsupported(`a family slot with its own schema at ${where}`);
      this.usesNest = true;
      this.line(
        indent,
        `if (!${this.module.familyCheck(slot.family)}(${x}, d + ${offset}, nest + 1)) return false; // ${slot.family}`,
      );
      return;
    }
    if (keys.length === 0) {
      if (slot !== undefined && slot.children.size > 0)
        throw new Unsupported(`slots inside an empty schema at ${where}`);
      // Strings (most opaque values) counted here; the rest by \`json\`.
      this.line(indent, `if (typeof ${x} === "string") c += ${x}.length + 2;`);
      this.line(indent, `else if (!json(${x}, d + ${offset})) return false;`);
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
      this.line(indent, `const ${saved} = keys;`);
      this.line(indent, `const ${savedChars} = chars;`);
      this.line(
        indent,
        `if (!(${branches.map((b) => `${b}(${x}, d + ${offset}) || ((keys = ${saved}), (chars = ${savedChars}), false)`).join(" || ")})) return false;`,
      );
      return;
    }
    if (schema.const !== undefined || schema.enum !== undefined) {
      const values: unknown[] = schema.const !== undefined ? [schema.const] : (schema.enum as unknown[]);
      if (!Array.isArray(values) || !values.every(isPrimitive))
        throw new Unsupported(`a non-primitive const/enum at ${where}`);
      this.line(indent, `if (${values.map((v) => `${x} !== ${JSON.stringify(v)}`).join(" && ")}) return false;`);
      // Every allowed value is a primitive of a known type: the remaining keywords only narrow them further.
      const rest = keys.filter((k) => k !== "const" && k !== "enum" && k !== "type");
      if (rest.length === 0) {
        if (schema.type === undefined || values.every((v) => typeAllows(schema.type, v))) {
          // Strings, booleans and null all of one size: a constant; else (numbers) counted as found.
          const sizes = new Set(values.map(constChars));
          if (sizes.size === 1 && !sizes.has(-1)) this.line(indent, `c += ${[...sizes][0]};`);
          else this.line(indent, `if (counting) c += scalarChars(${x});`);
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
    for (const t of types)
      if (!(TYPES as readonly string[]).includes(t)) throw new Unsupported(`type "${t}" at ${where}`);
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
          this.line(indent + 1, `if (counting) c += numberChars(${x});`);
        },
      });
    }
    if (types.has("boolean"))
      branches.push({ test: `typeof ${x} === "boolean"`, body: () => this.line(indent + 1, `c += ${x} ? 4 : 5;`) });
    if (types.has("null")) branches.push({ test: `${x} === null`, body: () => this.line(indent + 1, "c += 4;") });
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
    this.line(indent, `c += ${x}.length + 2;`);
  }

  private numberKeywords(schema: Schema, x: string, indent: number, where: string): void {
    const format = this.formatFor(schema, "number", where);
    if (format !== undefined) this.line(indent, `if (!${format}(${x})) return false;`);
    const bound = (k: string, op: string) => {
      const v = schema[k];
      if (v === undefined) return;
      if (typeof v !== "number") throw new Unsupported(`a non-numeric ${k}`);
      this.line(indent, `if (${x} ${op} ${v}) return false;`);
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
    const i = this.fresh("i");
    const item = this.fresh("item");
    this.line(indent, `for (let ${i} = 0; ${i} < ${x}.length; ${i}++) {`);
    this.line(indent + 1, `const ${item} = ${x}[${i}];`);
    this.value(items as Schema, item, offset + 1, slot?.children.get("*"), indent + 1, `${where}[*]`);
    this.line(indent, "}");
    // "[" and "]", a comma between items.
    this.line(indent, `c += ${x}.length === 0 ? 2 : ${x}.length + 1;`);
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
    for (const r of required)
      if (!Object.hasOwn(props, r)) throw new Unsupported(`required "${r}" without a property schema at ${where}`);
    for (const n of names) if (n === "__proto__") throw new Unsupported(`a property named "__proto__" at ${where}`);
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
    const n = this.fresh("n");
    const seen = this.fresh("req");
    const k = this.fresh("k");
    const y = this.fresh("y");
    this.line(indent, `if (saving && !plainObject(${x})) return false;`);
    this.line(indent, `let ${n} = 0;`);
    if (required.length > 0) this.line(indent, `let ${seen} = 0;`);
    this.line(indent, `for (const ${k} in ${x}) {`);
    this.line(indent + 1, `${n}++;`);
    this.line(indent + 1, `const ${y} = ${x}[${k}];`);
    const otherwise = () => {
      if (closed) this.line(indent + 3, "return false;");
      else {
        this.line(indent + 3, `if (${k} === "__proto__") return false;`);
        this.line(indent + 3, `c += ${k}.length + 3;`);
        this.value(additional as Schema, y, offset + 1, star, indent + 3, `${where}.*`);
      }
    };
    if (names.length === 0) {
      // No declared properties: every key takes the additional-properties schema.
      this.lines.push(
        ...(() => {
          const before = this.lines.length;
          otherwise();
          return this.lines.splice(before).map((l) => l.slice(4));
        })(),
      );
    } else {
      this.line(indent + 1, `switch (${k}) {`);
      // "$type" and "$version" first: writers put them first, and each case is one more compare.
      const tags: string[] = names.filter((name) => name === "$type" || name === "$version");
      for (const name of [...tags, ...names.filter((name) => !tags.includes(name))]) {
        this.line(indent + 2, `case ${JSON.stringify(name)}:`);
        // The key, its quotes and its colon.
        this.line(indent + 3, `c += ${name.length + 3};`);
        this.value(props[name], y, offset + 1, slot?.children.get(name), indent + 3, `${where}.${name}`);
        if (required.includes(name)) this.line(indent + 3, `${seen}++;`);
        this.line(indent + 3, "break;");
      }
      this.line(indent + 2, "default:");
      otherwise();
      this.line(indent + 1, "}");
    }
    this.line(indent, "}");
    if (required.length > 0) this.line(indent, `if (${seen} !== ${required.length}) return false;`);
    if (!closed) this.line(indent, `if (${n} > maxKeys) return false;`);
    this.line(indent, `keys += ${n};`);
    // "{" and "}", a comma between members.
    this.line(indent, `c += ${n} === 0 ? 2 : ${n} + 1;`);
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
  const i = DISPATCH_FIRST.indexOf(t.$type);
  return i === -1 ? DISPATCH_FIRST.length : i;
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
  /** A separate function for one `anyOf` branch: `(v, d)`, true when `v` satisfies it. */
  branchFunction(schema: Schema, where: string): string {
    const name = `anyOf${this.branches++}`;
    const body = new FunctionBody(this);
    body.value(schema, "v", 0, undefined, 1, where);
    const guard = entryGuard(body);
    this.helpers.push(
      [
        `/** ${where} */`,
        `function ${name}(v, d) {`,
        ...(guard ? [`  ${guard}`] : []),
        "  let c = 0;",
        ...body.lines,
        "  chars += c;",
        "  return true;",
        "}",
      ].join("\n"),
    );
    return name;
  }
}

/** The conservative limit test at a function's entry: its deepest container and largest closed object. */
function entryGuard(body: FunctionBody): string | undefined {
  const tests: string[] = [];
  tests.push(`d + ${body.maxOffset} > maxDepth`);
  if (body.maxClosedKeys > 0) tests.push(`maxKeys < ${body.maxClosedKeys}`);
  return `if (${tests.join(" || ")}) return false;`;
}

export interface FusedOutput {
  code: string;
  /** Types whose check is a constant "no", with the reason. */
  unsupported: { $type: string; reason: string }[];
}

export function buildFusedCheck(inputs: readonly FusedInput[], formatsImport: string, regenerate: string): FusedOutput {
  const sorted = [...inputs].sort((a, b) => (a.$type < b.$type ? -1 : a.$type > b.$type ? 1 : 0));
  const families = new Set(sorted.map((t) => t.family));
  const module = new ModuleState(families);
  const unsupported: FusedOutput["unsupported"] = [];
  const typeFunctions: string[] = [];
  const names = new Map<FusedInput, string>();
  for (const t of sorted) {
    const name = `check${t.validatorName.replace(/^validate/, "")}`;
    names.set(t, name);
    const body = new FunctionBody(module);
    const doc = `/** "${t.$type}" v${t.version} (${t.family}): the value at depth \`d\`, \`nest\` tagged values deep. */`;
    try {
      const tree = slotTree(t.slots);
      body.value(t.schema, "v", 0, tree, 1, t.$type);
      const lines = [doc, `function ${name}(v, d, nest) {`, `  ${entryGuard(body)}`];
      // The walker refuses to go into a type's slots `maxNesting` tagged values deep.
      if (t.slots.length > 0) lines.push("  if (nest >= maxNesting) return false;");
      lines.push("  let c = 0;");
      typeFunctions.push([...lines, ...body.lines, "  chars += c;", "  return true;", "}"].join("\n"));
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
      unsupported.push({ $type: t.$type, reason: e.message });
      typeFunctions.push(
        [
          doc,
          `// Not fused (${e.message}): always the long way.`,
          `function ${name}(v, d, nest) {`,
          "  return false;",
          "}",
        ].join("\n"),
      );
    }
  }

  const messageFunction = chatMessageFunction(sorted, module);

  const familyFunctions: string[] = [];
  for (const family of [...families].sort()) {
    const members = sorted.filter((t) => t.family === family).sort((a, b) => dispatchRank(a) - dispatchRank(b));
    const lines = [
      `/** A value of the ${family} family: dispatched on \`$type\`, each type at its latest version only. */`,
      `function check${identifier(family)}(v, d, nest) {`,
      '  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;',
      "  switch (v.$type) {",
    ];
    for (const t of members) {
      const version = checksOwnVersion(t)
        ? ""
        : t.version === 1
          ? "(v.$version === undefined || v.$version === 1) && "
          : `v.$version === ${t.version} && `;
      lines.push(`    case ${JSON.stringify(t.$type)}:`, `      return ${version}${names.get(t)}(v, d, nest);`);
    }
    lines.push("    default:", "      return false;", "  }", "}");
    familyFunctions.push(lines.join("\n"));
  }

  const familyTable = [...families].sort().map((f) => `  ${JSON.stringify(f)}: check${identifier(f)},`);
  const out: string[] = [
    "// @ts-nocheck",
    GENERATED_HEADER,
    `// Regenerate with \`${regenerate}\`. One fused check per document root (generator/fused-check.ts):`,
    "// true only when today's path (limits walk + validators + walker) would accept the value as it is,",
    "// with nothing to migrate or preserve; on false the caller takes today's path, which decides and reports.",
    `import { ${module.formats.size > 0 ? "formatCheck, " : ""}isDateTime } from ${JSON.stringify(formatsImport)};`,
    "",
    "// The limits of the current call (set by the entry points) and the keys counted so far.",
    "let maxDepth = 256;",
    "let maxKeys = 100000;",
    "let maxNesting = 128;",
    "let saving = false;",
    "let keys = 0;",
    "let chars = 0;",
    "// Whether numbers go into `chars` (a load: the duplicate-key check reads it); else they count 0, still a lower bound.",
    "let counting = false;",
    "",
    ...[...module.patterns].map(([source, name]) => `const ${name} = new RegExp(${JSON.stringify(source)}, "u");`),
    ...[...module.formats].map(([format, name]) => `const ${name} = formatCheck(${JSON.stringify(format)}).test;`),
    "",
    RUNTIME_HELPERS,
    "",
    ...familyFunctions.flatMap((f) => [f, ""]),
    ...typeFunctions.flatMap((f) => [f, ""]),
    messageFunction,
    "",
    ...module.helpers.flatMap((f) => [f, ""]),
    families.has(SESSION_FAMILY)
      ? SESSION_CHECK
      : "/** No ProviderState family here: no session is fused. */\nfunction checkSessionObject(s, d) {\n  return false;\n}",
    "",
    "const familyChecks = {",
    ...familyTable,
    "};",
    "",
    ENTRY_POINTS,
    "",
    `/** Types whose check is a constant "no" (a schema keyword the emitter does not implement). */`,
    `export const unfusedTypes = ${JSON.stringify(unsupported.map((u) => u.$type))};`,
    "",
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
 * `checkChatMessage(v, d, nest)`: one message of a message log (a document root of its own), held
 * to exactly what a message inside a history state is held to: emitted by the same `value` from
 * the host's own item schema and slots, at the host's nesting (the state's `nest`, contents one
 * deeper). Without the host (a project's own types only): a constant "no".
 */
function chatMessageFunction(inputs: readonly FusedInput[], module: ModuleState): string {
  const host = inputs.find((t) => t.$type === MESSAGE_HOST);
  const doc = `/** A chat message (the items of "${MESSAGE_HOST}" v${host?.version ?? "-"} messages) at depth \`d\`, \`nest\` tagged values deep. */`;
  const never = (reason: string) =>
    [
      doc,
      `// Not fused (${reason}): always the long way.`,
      "function checkChatMessage(v, d, nest) {",
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
    body.value(items as Schema, "v", 0, slot, 1, MESSAGE_TYPE);
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e;
    // The host's own check is a constant "no" then too (and listed in `unfusedTypes`).
    return never(e.message);
  }
  const lines = [doc, "function checkChatMessage(v, d, nest) {", `  ${entryGuard(body)}`];
  // The host checks this before walking its messages' contents; so does a message on its own.
  if (body.usesNest) lines.push("  if (nest >= maxNesting) return false;");
  return [...lines, "  let c = 0;", ...body.lines, "  chars += c;", "  return true;", "}"].join("\n");
}

const RUNTIME_HELPERS = `/**
 * A value about to be written must be a plain object (what JSON.stringify writes as it is). An own
 * \`toJSON\` needs no test here: its value is a function, which no position accepts; an inherited one
 * (a polluted Object.prototype) makes the entry points decline.
 */
function plainObject(o) {
  const proto = Object.getPrototypeOf(o);
  return proto === Object.prototype || proto === null;
}

/**
 * Any JSON value inside an opaque subtree, within the limits: containers at most \`maxDepth\` deep
 * (\`d\` is the depth of \`x\`), at most \`maxKeys\` keys per object, no "__proto__" key, finite numbers.
 */
function json(x, d) {
  if (typeof x !== "object") {
    if (typeof x === "string") {
      chars += x.length + 2;
      return true;
    }
    if (typeof x === "boolean") {
      chars += x ? 4 : 5;
      return true;
    }
    if (!Number.isFinite(x)) return false;
    if (counting) chars += numberChars(x);
    return true;
  }
  if (x === null) {
    chars += 4;
    return true;
  }
  return container(x, d);
}

/**
 * \`json\` for an array or object \`x\` (not null): strings and numbers inside are checked and counted
 * here (in a local, added once), anything else by \`json\` (a call per scalar cost more than its check).
 */
function container(x, d) {
  if (d > maxDepth) return false;
  let c = 0;
  if (Array.isArray(x)) {
    const len = x.length;
    for (let i = 0; i < len; i++) {
      const y = x[i];
      if (typeof y === "string") c += y.length + 2;
      else if (typeof y === "number") {
        if (!Number.isFinite(y)) return false;
        if (counting) c += numberChars(y);
      } else if (!json(y, d + 1)) return false;
    }
    chars += c + (len === 0 ? 2 : len + 1);
    return true;
  }
  if (saving && !plainObject(x)) return false;
  let n = 0;
  for (const k in x) {
    if (k === "__proto__") return false;
    n++;
    const y = x[k];
    c += k.length + 3;
    if (typeof y === "string") c += y.length + 2;
    else if (typeof y === "number") {
      if (!Number.isFinite(y)) return false;
      if (counting) c += numberChars(y);
    } else if (!json(y, d + 1)) return false;
  }
  if (n > maxKeys) return false;
  keys += n;
  chars += c + (n === 0 ? 2 : n + 1);
  return true;
}

/**
 * The fewest characters any JSON number token for the finite number \`x\` can take (a lower bound:
 * \`1e6\` is shorter than \`1000000\`). Exact for the integers below 2^53 and the numbers with one
 * decimal; otherwise from the shortest round-trip digits \`String\` gives: no token for \`x\` has fewer.
 */
function numberChars(x) {
  // Small enough to inline: a non-negative int32 with fewer than three trailing zeros, whose
  // decimal digits are its shortest token ("| 0": an int32 remainder, never a float one).
  if (x > 0 && x < 1e9 && (x | 0) === x && (x | 0) % 1000 !== 0)
    return x < 10 ? 1 : x < 100 ? 2 : x < 1e3 ? 3 : x < 1e4 ? 4 : x < 1e5 ? 5 : x < 1e6 ? 6 : x < 1e7 ? 7 : x < 1e8 ? 8 : 9;
  return otherNumberChars(x);
}

/** \`numberChars\` for every other finite number. */
function otherNumberChars(x) {
  let sign = 0;
  if (x < 0) {
    x = -x;
    sign = 1;
  }
  if (x < 10 && Math.floor(x) === x) return sign + 1;
  if (x < 9007199254740992 && Math.floor(x) === x) {
    // An integer below 2^53: each has its own double, so a token needs all its significant digits k;
    // with z trailing zeros "<k digits>e<z>" may be shorter than the D = k + z digits.
    let z = 0;
    while (x % 10 === 0) {
      x /= 10;
      z++;
    }
    const k = decimalDigits(x);
    return sign + (z === 0 ? k : Math.min(k + z, k + 1 + (z < 10 ? 1 : 2)));
  }
  const t = x * 10;
  if (x < 1e15 && t === Math.floor(t)) {
    // Not an integer: a token needs "." or "e", and below 1 a leading "0." (or "e-"): at least the
    // integer digits, one more digit and the point.
    return sign + (x < 1 ? 3 : decimalDigits(Math.floor(x)) + 2);
  }
  return sign + shortestChars(x);
}

/** The decimal digits of the integer \`x\`, 1 <= x < 2^53. */
function decimalDigits(x) {
  if (x < 1e5) return x < 10 ? 1 : x < 100 ? 2 : x < 1e3 ? 3 : x < 1e4 ? 4 : 5;
  let k = 5;
  for (let p = 1e5; x >= p && k < 16; p *= 10) k++;
  return k;
}

/** \`numberChars\` from the shortest round-trip digits of the positive \`x\` (\`String\` gives them). */
function shortestChars(x) {
  const s = String(x);
  let end = s.indexOf("e");
  if (end === -1) end = s.length;
  let first = -1;
  let last = -1;
  for (let i = 0; i < end; i++) {
    const ch = s.charCodeAt(i);
    if (ch >= 49 && ch <= 57) {
      if (first === -1) first = i;
      last = i;
    }
  }
  let k = 0;
  for (let i = first; i <= last && i !== -1; i++) if (s.charCodeAt(i) !== 46) k++;
  if (Math.floor(x) === x) return k;
  return k + (x < 1 ? 2 : 1);
}

/** A string, number, boolean or null in the character count. */
function scalarChars(x) {
  if (typeof x === "string") return x.length + 2;
  if (typeof x === "number") return numberChars(x);
  return x === false ? 5 : 4;
}`;

const SESSION_CHECK = `/**
 * A session object at depth \`d\`: \`id\` (non-empty string), \`kind\` ("local" | "hosted"),
 * \`conversationId\` (a string, or an object of strings; not with "kind": "local"), \`stateBag\` (an
 * object of ProviderState values). A \`quarantine\` section, a "__proto__" key or any other key: "no".
 */
function checkSessionObject(s, d) {
  if (typeof s !== "object" || s === null || Array.isArray(s) || d + 1 > maxDepth || maxKeys < 4) return false;
  if (saving && !plainObject(s)) return false;
  let n = 0;
  let c = 0;
  let id = false;
  let kind;
  let conversation = false;
  let bag;
  for (const k in s) {
    const x = s[k];
    if (x === undefined) continue; // written as nothing; the walker skips it too
    n++;
    switch (k) {
      case "id":
        if (typeof x !== "string" || x.length === 0) return false;
        id = true;
        c += 5 + x.length + 2;
        break;
      case "kind":
        if (x !== "local" && x !== "hosted") return false;
        kind = x;
        c += 7 + x.length + 2;
        break;
      case "conversationId":
        c += 17;
        if (typeof x !== "string") {
          if (typeof x !== "object" || x === null || Array.isArray(x) || (saving && !plainObject(x))) return false;
          let m = 0;
          for (const name in x) {
            m++;
            const y = x[name];
            if (name === "__proto__" || typeof y !== "string") return false;
            c += name.length + 3 + y.length + 2;
          }
          if (m > maxKeys) return false;
          keys += m;
          c += m === 0 ? 2 : m + 1;
        } else c += x.length + 2;
        conversation = true;
        break;
      case "stateBag":
        bag = x;
        c += 11;
        break;
      default:
        return false;
    }
  }
  if (!id || bag === undefined || (kind === "local" && conversation)) return false;
  if (typeof bag !== "object" || bag === null || Array.isArray(bag) || (saving && !plainObject(bag))) return false;
  let m = 0;
  for (const key in bag) {
    m++;
    c += key.length + 3;
    if (key === "__proto__" || !checkProviderState(bag[key], d + 2, 0)) return false;
  }
  if (m > maxKeys) return false;
  keys += n + m;
  // The braces and commas of the session and of its state bag.
  chars += c + (n === 0 ? 2 : n + 1) + (m === 0 ? 2 : m + 1);
  return true;
}`;

const ENTRY_POINTS = `/** The limits a check runs under (resolved: every field set). */
export interface FusedLimits {
  maxDepth: number;
  maxKeys: number;
  maxNesting: number;
  /** The value comes from the application (save): plain objects only, no \`undefined\`. */
  saving: boolean;
  /** Count numbers into \`charCount()\` too (a load; else they count 0 there). */
  count?: boolean;
}

/** False when the call cannot be fused: a save while Object.prototype carries a toJSON. */
function begin(limits) {
  if (limits.saving && typeof Object.prototype.toJSON === "function") return false;
  maxDepth = limits.maxDepth;
  maxKeys = limits.maxKeys;
  maxNesting = limits.maxNesting;
  saving = limits.saving;
  counting = limits.count === true;
  keys = 0;
  chars = 0;
  return true;
}

/** The object keys the last check counted (every object it accepted, opaque subtrees included). */
export function keyCount(): number {
  return keys;
}

/**
 * A lower bound of the length of the compact JSON text of what the last check accepted (strings
 * counted without escapes, numbers at their shortest): text with more characters than this, less
 * its escapes' extra characters, by fewer than five (\`"":0,\`) cannot hold a member \`JSON.parse\` dropped.
 */
export function charCount(): number {
  return chars;
}
${`
/** A session object at depth \`depth\` (1: a bare session; 2: inside the envelope). */
export function checkSession(session: unknown, depth: number, limits: FusedLimits): boolean {
  return begin(limits) && checkSessionObject(session, depth);
}`}

/** One chat message (a message-log entry) at depth \`depth\`: what a message in a history state is held to. */
export function checkMessage(message: unknown, depth: number, limits: FusedLimits): boolean {
  return begin(limits) && checkChatMessage(message, depth, 0);
}

/** One tagged value of \`family\` at depth \`depth\`, \`nesting\` tagged values deep; false for a family with no member here. */
export function checkTagged(value: unknown, family: string, depth: number, nesting: number, limits: FusedLimits): boolean {
  const check = familyChecks[family];
  if (check === undefined) return false;
  return begin(limits) && check(value, depth, nesting);
}`;
