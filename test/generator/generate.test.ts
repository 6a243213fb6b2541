/**
 * `npm run gen` end to end on small temporary projects: schemas, slots, registry, validators,
 * determinism, --check, frozen history, the no-op cache, and "write the interface, run gen, use it".
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generate } from "../../generator/index.js";
import type { GenerateResult } from "../../generator/report.js";
import type { TypeSummary } from "../../generator/summary.js";
import type { TypeDefinition } from "../../src/runtime/registry/registry-types.js";
import { AIContextProvider, ChatClientAgent, type InvokedContext } from "../../src/agent.js";
import {
  ProviderSessionState,
  SessionValidationError,
  TypeRegistry,
  defaultRegistry,
  deserializeSession,
  serializeSession,
  type ChatMessage,
  type ProviderState,
} from "../../src/index.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { isDateTime } from "../../src/runtime/registry/formats.js";
import { readFile, readTree, REPO, removeTempProjects, tempProject, writeFile } from "./helpers.js";

afterAll(removeTempProjects);

const STATE = `import type { JsonValue, ProviderState } from "./core/tagged.js";
import type { AIContent, ChatMessage, TextContent } from "./core/messages.js";

/** Notes kept by a provider. */
export interface NotesState extends ProviderState<"test.Notes", 2> {
  messages: ChatMessage[];
  byId: Record<string, ChatMessage>;
  counts: Record<string, number>;
  maybe: string | undefined;
  optional?: number;
  pinned?: TextContent;
  inline: (TextContent | AIContent)[];
  nested: { deeper: { items: AIContent[] } };
  data?: JsonValue;
  tree: Tree;
}

export interface Tree {
  label: string;
  children: Tree[];
}
`;

const typeOf = (result: GenerateResult, $type: string): TypeSummary => {
  const t = result.types.find((x) => x.$type === $type);
  if (!t) throw new Error(`no type ${$type}`);
  return t;
};

const json = (root: string, rel: string) => JSON.parse(readFile(root, rel)) as Record<string, any>;

describe("built-in types and a history-like state", () => {
  let root: string;
  let result: GenerateResult;

  beforeAll(async () => {
    root = tempProject({ "src/runtime/notes.ts": STATE });
    result = await generate({ cwd: root, cache: false });
    expect(result.errors).toEqual([]);
  });

  it("finds every marked type with its family, version and source", () => {
    expect(result.ok).toBe(true);
    const types = result.types.map((t) => t.$type);
    expect(types).toEqual([...types].sort()); // sorted by $type
    expect(types).toEqual(
      expect.arrayContaining([
        "citation",
        "data",
        "functionCall",
        "test.Notes",
        "text",
        "textSpan",
        "toolApprovalRequest",
        "toolApprovalResponse",
        "usage",
      ]),
    );
    expect(typeOf(result, "text")).toMatchObject({
      family: "AIContent",
      version: 1,
      name: "TextContent",
      source: expect.stringMatching(/^src\/runtime\/core\/messages\.ts:\d+$/),
    });
    expect(typeOf(result, "test.Notes")).toMatchObject({
      family: "ProviderState",
      version: 2,
      name: "NotesState",
      source: "src/runtime/notes.ts:5",
    });
  });

  it("records family slots at every depth, and only where a family sits", () => {
    expect(typeOf(result, "test.Notes").slots).toEqual([
      { path: ["byId", "*", "contents", "*"], family: "AIContent" },
      { path: ["inline", "*"], family: "AIContent" },
      { path: ["messages", "*", "contents", "*"], family: "AIContent" },
      { path: ["nested", "deeper", "items", "*"], family: "AIContent" },
      { path: ["pinned"], family: "AIContent" },
    ]);
    // Annotations sit inside the content types, not in the state.
    expect(typeOf(result, "text").slots).toEqual([{ path: ["annotations", "*"], family: "AIAnnotation" }]);
    expect(typeOf(result, "citation").slots).toEqual([{ path: ["annotatedRegions", "*"], family: "AnnotatedRegion" }]);
    expect(typeOf(result, "toolApprovalRequest").slots).toEqual([
      { path: ["annotations", "*"], family: "AIAnnotation" },
      { path: ["toolCall"], family: "AIContent" },
    ]);
    expect(typeOf(result, "textSpan").slots).toEqual([]);
  });

  it("post-processes the schema: $type/$version, Record values, optional keys, JsonValue, open string unions", () => {
    const s = json(root, "schemas/ProviderState/test.Notes.schema.json");
    expect(s.$schema).toBe("http://json-schema.org/draft-07/schema#");
    expect(s.$id).toBe("ProviderState/test.Notes.schema.json");
    expect(s.title).toBe("NotesState");
    expect(s.description).toBe("Notes kept by a provider.");
    expect(s["x-statebag"]).toMatchObject({ family: "ProviderState", $type: "test.Notes", version: 2 });
    expect(s.properties.$type).toEqual({ type: "string", const: "test.Notes" });
    expect(s.properties.$version).toEqual({ type: "integer", const: 2 });
    expect(s.required).toEqual(["$type", "$version", "byId", "counts", "inline", "messages", "nested", "tree"]);
    expect(s.additionalProperties).toBe(false);
    expect(s.properties.counts).toEqual({ type: "object", additionalProperties: { type: "number" } });
    expect(s.properties.byId.additionalProperties.required).toEqual(["contents", "role"]);
    expect(s.properties.data).toEqual({});
    expect(s.properties.messages.items.properties.role).toMatchObject({ type: "string" });
    expect(s.properties.messages.items.properties.role.anyOf).toBeUndefined();
    expect(s.properties.messages.items.properties.createdAt).toMatchObject({ type: "string", format: "date-time" });
    // A recursive plain type without slots stays a local definition.
    expect(s.properties.tree.properties.children.items).toEqual({ $ref: "#/definitions/Tree" });
    expect(s.definitions.Tree.required).toEqual(["children", "label"]);

    const text = json(root, "schemas/AIContent/text.schema.json");
    expect(text.properties.$version).toEqual({ type: "integer", const: 1 });
    expect(text.required).toEqual(["$type", "text"]); // version 1: $version optional
    expect(text.properties.additionalProperties).toEqual(
      expect.objectContaining({ type: "object", additionalProperties: {} }),
    );
  });

  it("document schemas reference member and family files; family files discriminate on $type", () => {
    const s = json(root, "schemas/ProviderState/test.Notes.schema.json");
    expect(s.properties.messages.items.properties.contents.items).toEqual({ $ref: "../AIContent.family.schema.json" });
    expect(s.properties.pinned).toEqual({ $ref: "../AIContent/text.schema.json" });
    expect(s.properties.inline.items).toEqual({ $ref: "../AIContent.family.schema.json" });

    const family = json(root, "schemas/AIContent.family.schema.json");
    expect(family.discriminator).toEqual({ propertyName: "$type" });
    expect(family.oneOf.length).toBeGreaterThanOrEqual(11);
    expect(family.oneOf[0]).toEqual({ $ref: "AIContent/data.schema.json" });

    // The whole set loads into ajv (strict, discriminator) and validates nested values by $type.
    const ajv = new Ajv({
      strict: true,
      allowUnionTypes: true,
      discriminator: true,
      formats: { "date-time": isDateTime },
    });
    ajv.addKeyword("x-statebag");
    for (const [rel, text] of Object.entries(readTree(path.join(root, "schemas"))))
      if (!rel.startsWith("history/")) ajv.addSchema(JSON.parse(text));
    const validate = ajv.getSchema("ProviderState.family.schema.json")!;
    const value = {
      $type: "test.Notes",
      $version: 2,
      messages: [
        {
          role: "user",
          contents: [
            {
              $type: "text",
              text: "hi",
              annotations: [{ $type: "citation", annotatedRegions: [{ $type: "textSpan", start: 0 }] }],
            },
          ],
        },
      ],
      byId: {},
      counts: { a: 1 },
      maybe: "x",
      inline: [],
      nested: { deeper: { items: [] } },
      tree: { label: "root", children: [] },
    };
    expect(validate(value)).toBe(true);
    value.messages[0]!.contents[0]!.annotations[0]!.annotatedRegions[0]!.start = 0.5;
    expect(validate(value)).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe("/messages/0/contents/0/annotations/0/annotatedRegions/0/start");
  });

  it("freezes each version's schema file in history, byte for byte", () => {
    expect(readFile(root, "schemas/history/ProviderState/test.Notes/v2.schema.json")).toBe(
      readFile(root, "schemas/ProviderState/test.Notes.schema.json"),
    );
    expect(fs.existsSync(path.join(root, "schemas/history/AIContent/text/v1.schema.json"))).toBe(true);
  });

  it("emits a registry and standalone validators: slots opaque, families open, nothing compiled at start-up", async () => {
    const registry = readFile(root, "src/generated/registry.ts");
    const validators = readFile(root, "src/generated/validators.ts");
    expect(registry.startsWith("// @generated by statebag gen. DO NOT EDIT.\n// Regenerate with `npm run gen`")).toBe(
      true,
    );
    expect(registry).toContain(
      'import type { Migration, TypeDefinition, Validator } from "../runtime/registry/registry-types.js";',
    );
    expect(validators.startsWith("// @ts-nocheck\n// @generated by statebag gen. DO NOT EDIT.\n")).toBe(true);
    expect(validators).toContain('import { FORMATS } from "../runtime/registry/formats.js";');
    expect(validators).not.toMatch(/new Ajv|\.compile\(/);

    const { generatedTypes } = (await import(pathToFileURL(path.join(root, "src/generated/registry.ts")).href)) as {
      generatedTypes: readonly TypeDefinition[];
    };
    expect(generatedTypes.map((t) => t.$type)).toEqual(result.types.map((t) => t.$type));
    const notes = generatedTypes.find((t) => t.$type === "test.Notes")!;
    expect(notes.slots).toEqual(typeOf(result, "test.Notes").slots);
    // Slot positions are left to the walker, which dispatches each item by its own "$type".
    expect((notes.schema.properties as Record<string, object>).pinned).not.toHaveProperty("required");

    const text = generatedTypes.find((t) => t.$type === "text")!;
    // A slot takes any tagged object (a user's annotation type validates with its own validator)...
    expect(text.validate({ $type: "text", text: "x", annotations: [{ $type: "acme.note", anything: 1 }] })).toBe(true);
    // ...and an untagged one is the walker's to reject (once, with the family in the message).
    expect(text.validate({ $type: "text", text: "x", annotations: [{ note: 1 }] })).toBe(true);
    const untagged = {
      id: "s",
      stateBag: {
        h: {
          $type: "InMemoryChatHistoryState",
          $version: 2,
          droppedMessageCount: 0,
          messages: [{ role: "user", contents: [{ $type: "text", text: "x", annotations: [{ note: 1 }] }] }],
        },
      },
    };
    expect(() => deserializeSession(untagged)).toThrow(SessionValidationError);
    try {
      deserializeSession(untagged);
    } catch (error) {
      const problems = (error as SessionValidationError).problems;
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ pointer: "/stateBag/h/messages/0/contents/0/annotations/0" });
      expect(problems[0].expected).toContain("AIAnnotation");
    }
    expect(text.validate({ $type: "text", text: "x", extra: 1 })).toBe(false);
    expect(text.validate({ $type: "text", text: "x", $version: 2 })).toBe(false);
    expect(text.validate({ $type: "text", text: "x", $version: 1 })).toBe(true);
  });
});

describe("determinism", () => {
  it("two runs in two fresh copies are byte-identical; a re-run writes nothing", async () => {
    const files = { "src/runtime/notes.ts": STATE };
    const a = tempProject(files);
    const b = tempProject(files);
    const ra = await generate({ cwd: a, cache: false });
    const rb = await generate({ cwd: b, cache: false });
    expect(ra.ok && rb.ok).toBe(true);
    const ta = readTree(a);
    expect(ta).toEqual(readTree(b));
    expect(Object.keys(ta).filter((f) => f.startsWith("schemas/")).length).toBeGreaterThan(20);
    for (const [rel, text] of Object.entries(ta)) {
      expect(text.endsWith("\n"), rel).toBe(true);
      expect(text.includes(a) || text.includes(REPO), rel).toBe(false); // no absolute paths
    }
    const again = await generate({ cwd: a, cache: false });
    expect(again.written).toEqual([]);
    expect(readTree(a)).toEqual(ta);
  });
});

describe("--check, frozen history and the cache", () => {
  const state = (body: string, version = 1) =>
    `import type { ProviderState } from "./core/tagged.js";\nexport interface S extends ProviderState<"acme.S", ${version}> {\n${body}\n}\n`;

  it("--check writes nothing and names stale, missing and extra files", async () => {
    const root = tempProject({
      "src/runtime/s.ts": state("  a: string;"),
      "src/runtime/t.ts": state("  b: string;")
        .replace(/acme\.S/g, "acme.T")
        .replace("interface S ", "interface T "),
    });
    expect((await generate({ cwd: root, cache: false })).ok).toBe(true);
    expect(await generate({ cwd: root, cache: false, check: true })).toMatchObject({
      ok: true,
      exitCode: 0,
      stale: [],
      missing: [],
      extra: [],
    });

    writeFile(root, "src/runtime/s.ts", state("  a: string;\n  b?: number;", 2));
    fs.rmSync(path.join(root, "src/runtime/t.ts"));
    fs.rmSync(path.join(root, "schemas/ProviderState.family.schema.json"));
    const before = readTree(root);
    const check = await generate({ cwd: root, cache: false, check: true });
    expect(check.ok).toBe(false);
    expect(check.exitCode).toBe(1);
    expect(check.stale).toEqual([
      "schemas/ProviderState/acme.S.schema.json",
      "src/generated/descriptors.ts",
      "src/generated/fused-check.ts",
      "src/generated/registry.ts",
      "src/generated/validators.ts",
      "src/generated/versions.ts",
    ]);
    expect(check.missing).toEqual([
      "schemas/ProviderState.family.schema.json",
      "schemas/history/ProviderState/acme.S/v2.schema.json",
    ]);
    expect(check.extra).toEqual(["schemas/ProviderState/acme.T.schema.json"]);
    expect(check.written).toEqual([]);
    expect(readTree(root)).toEqual(before);

    const fixed = await generate({ cwd: root, cache: false });
    expect(fixed.deleted).toEqual(["schemas/ProviderState/acme.T.schema.json"]);
    expect((await generate({ cwd: root, cache: false, check: true })).ok).toBe(true);
    // History of a removed type stays: stored sessions may still hold it.
    expect(fs.existsSync(path.join(root, "schemas/history/ProviderState/acme.T/v1.schema.json"))).toBe(true);
  });

  it("history files are written once and never overwritten", async () => {
    const root = tempProject({ "src/runtime/s.ts": state("  a: string;") });
    await generate({ cwd: root, cache: false });
    const v1 = "schemas/history/ProviderState/acme.S/v1.schema.json";
    const original = readFile(root, v1);
    expect(original).toContain('"a"');

    writeFile(root, "src/runtime/s.ts", state("  a: string;\n  c: boolean;"));
    await generate({ cwd: root, cache: false });
    expect(readFile(root, v1)).toBe(original);
    expect(readFile(root, "schemas/ProviderState/acme.S.schema.json")).toContain('"c"');
    expect((await generate({ cwd: root, cache: false, check: true })).ok).toBe(true); // history is not compared

    writeFile(root, "src/runtime/s.ts", state("  a: string;\n  c: boolean;", 2));
    const bumped = await generate({ cwd: root, cache: false });
    expect(bumped.written).toContain("schemas/history/ProviderState/acme.S/v2.schema.json");
    // Recorded for the compatibility check, which catches later edits by hash.
    expect(bumped.recorded).toEqual(["ProviderState/acme.S/v2.schema.json"]);
    expect(Object.keys(json(root, "schemas/history/frozen.lock.json").files)).toContain(
      "ProviderState/acme.S/v1.schema.json",
    );
    expect(readFile(root, v1)).toBe(original);
    expect(readFile(root, "schemas/history/ProviderState/acme.S/v2.schema.json")).toBe(
      readFile(root, "schemas/ProviderState/acme.S.schema.json"),
    );
  });

  it("a no-op re-run is a cache hit; any input change or a damaged output is not ignored", async () => {
    const root = tempProject({ "src/runtime/s.ts": state("  a: string;") });
    expect((await generate({ cwd: root })).cacheHit).toBe(false);
    expect(fs.existsSync(path.join(root, "node_modules/.cache/statebag/gen.json"))).toBe(true);

    const hit = await generate({ cwd: root });
    expect(hit).toMatchObject({ ok: true, cacheHit: true, written: [] });
    expect(hit.types.map((t) => t.$type)).toContain("acme.S");

    fs.rmSync(path.join(root, "src/generated/registry.ts"));
    const repaired = await generate({ cwd: root });
    expect(repaired).toMatchObject({ cacheHit: true, written: ["src/generated/registry.ts"] });

    writeFile(root, "src/runtime/s.ts", state("  a: string;\n  z: number;"));
    const miss = await generate({ cwd: root });
    expect(miss.cacheHit).toBe(false);
    expect(readFile(root, "schemas/ProviderState/acme.S.schema.json")).toContain('"z"');

    writeFile(
      root,
      "src/runtime/new.ts",
      `import type { ProviderState } from "./core/tagged.js";\nexport interface N extends ProviderState<"acme.N", 1> { n: string }\n`,
    );
    const added = await generate({ cwd: root });
    expect(added.cacheHit).toBe(false);
    expect(added.types.map((t) => t.$type)).toContain("acme.N");
  });
});

describe("adding a provider state type: write the interface, run gen, use it", () => {
  it("validates values with the generated validator, and a provider and session round trip use it", async () => {
    const root = tempProject({ "src/runtime/notes.ts": STATE });
    expect((await generate({ cwd: root })).ok).toBe(true);

    writeFile(
      root,
      "src/runtime/summary.ts",
      `import type { ProviderState } from "./core/tagged.js";
import type { ChatMessage } from "./core/messages.js";

export interface SummaryState extends ProviderState<"acme.Summary", 1> {
  /** @minLength 1 */
  summary: string;
  /** @format date-time */
  updatedAt?: string;
  recent: ChatMessage[];
}
`,
    );
    const result = await generate({ cwd: root });
    expect(result.ok).toBe(true);
    expect(result.written).toEqual(
      expect.arrayContaining([
        "schemas/ProviderState/acme.Summary.schema.json",
        "schemas/history/ProviderState/acme.Summary/v1.schema.json",
        "src/generated/registry.ts",
        "src/generated/validators.ts",
      ]),
    );
    expect(typeOf(result, "acme.Summary").slots).toEqual([
      { path: ["recent", "*", "contents", "*"], family: "AIContent" },
    ]);
    // minLength needs ajv's ucs2length helper: the standalone code require()s it through createRequire.
    expect(readFile(root, "src/generated/validators.ts")).toContain("const require = createRequire(import.meta.url);");

    const { generatedTypes } = (await import(pathToFileURL(path.join(root, "src/generated/registry.ts")).href)) as {
      generatedTypes: readonly TypeDefinition[];
    };
    const summary = generatedTypes.find((t) => t.$type === "acme.Summary")!;
    expect(summary).toMatchObject({
      family: "ProviderState",
      version: 1,
      name: "SummaryState",
      source: "src/runtime/summary.ts:4",
    });
    const ok = {
      $type: "acme.Summary",
      summary: "s",
      updatedAt: "2025-01-31T12:00:00+01:00",
      recent: [{ role: "assistant", contents: [{ $type: "acme.unknown" }] }],
    };
    expect(summary.validate(ok)).toBe(true);
    expect(summary.validate({ ...ok, updatedAt: "2025-02-30T12:00:00Z" })).toBe(false);
    expect(summary.validate.errors?.[0]).toMatchObject({ instancePath: "/updatedAt", keyword: "format" });
    expect(summary.validate({ ...ok, updatedAt: "2025-01-31T12:00:00" })).toBe(false);
    expect(summary.validate({ ...ok, summary: "" })).toBe(false);
    expect(summary.validate.errors?.[0]).toMatchObject({ instancePath: "/summary", keyword: "minLength" });
    const { summary: _omitted, ...missing } = ok;
    expect(summary.validate(missing)).toBe(false);
    expect(summary.validate.errors?.[0]).toMatchObject({ keyword: "required", params: { missingProperty: "summary" } });

    // ... and use it: a provider keeps the new state; sessions round-trip through the new registry.
    // The temp project carries its own copies of the message types; compose only its new type with statebag's registry.
    const registry = TypeRegistry.compose(defaultRegistry(), { source: "temp project", types: [summary] });
    interface SummaryState extends ProviderState<"acme.Summary", 1> {
      summary: string;
      updatedAt?: string;
      recent: ChatMessage[];
    }
    class SummaryProvider extends AIContextProvider {
      readonly key = "acme.summary";
      readonly state = new ProviderSessionState<SummaryState>(this.key, {
        stateType: "acme.Summary",
        version: 1,
        initial: () => ({ $type: "acme.Summary", summary: "-", recent: [] }),
      });
      override invoked(context: InvokedContext) {
        const recent = [...context.requestMessages, ...context.responseMessages];
        this.state.write(context.state, {
          $type: "acme.Summary",
          summary: `${recent.length} messages`,
          updatedAt: "2025-01-31T12:00:00Z",
          recent,
        });
      }
    }
    const agent = new ChatClientAgent({ client: new ScriptedChatClient(), contextProviders: [new SummaryProvider()] });
    const session = agent.createSession();
    await agent.run("hello", session);
    const stored = serializeSession(session, { registry, validate: true, strict: true });
    const loaded = deserializeSession(stored, { registry, strict: true });
    expect(loaded).toEqual(session);
    expect(agent.getService(SummaryProvider)!.state.read(loaded)!.summary).toBe("2 messages");
    const broken = stored.replace('"updatedAt":"2025-01-31T12:00:00Z"', '"updatedAt":"2025-02-30T12:00:00Z"');
    expect(() => deserializeSession(broken, { registry })).toThrow(SessionValidationError);
    try {
      deserializeSession(broken, { registry });
    } catch (error) {
      expect((error as SessionValidationError).problems[0]).toMatchObject({
        pointer: "/session/stateBag/acme.summary/updatedAt",
        $type: "acme.Summary",
      });
    }
  });
});

describe("user projects (--project)", () => {
  it("scans the tsconfig's files, imports the runtime from statebag, sees statebag's own families", async () => {
    const root = tempProject(
      {
        "app/tsconfig.json": JSON.stringify({
          compilerOptions: {
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            paths: { statebag: [path.join(REPO, "src/index.ts")] },
          },
          include: ["src"],
        }),
        "app/src/state.ts": `import type { AIContentBase, ChatMessage, ProviderState, Tagged } from "statebag";
export interface NotesState extends ProviderState<"acme.Notes", 1> {
  pinned: ChatMessage[];
  cards: CardContent[];
}
export interface CardContent extends Tagged<"AIContent", "acme.card", 1>, AIContentBase {
  title: string;
}
`,
        "app/test/ignored.ts": `import type { ProviderState } from "statebag";\nexport interface Ignored extends ProviderState<"ignored", 1> { a: string }\n`,
      },
      { runtime: false },
    );
    const result = await generate({ cwd: root, project: "app/tsconfig.json", cache: false });
    expect(result.errors).toEqual([]);
    expect(result.types.map((t) => t.$type)).toEqual(["acme.Notes", "acme.card"]);
    expect(typeOf(result, "acme.Notes").slots).toEqual([
      { path: ["cards", "*"], family: "AIContent" },
      { path: ["pinned", "*", "contents", "*"], family: "AIContent" },
    ]);
    expect(typeOf(result, "acme.card").slots).toEqual([{ path: ["annotations", "*"], family: "AIAnnotation" }]);
    expect(typeOf(result, "acme.Notes").source).toBe("src/state.ts:2");
    const registry = readFile(root, "app/src/generated/registry.ts");
    expect(registry).toContain('import type { Migration, TypeDefinition, Validator } from "statebag";');
    expect(readFile(root, "app/src/generated/validators.ts")).not.toContain("../runtime/");
    // AIContent has members elsewhere (statebag): the family file checks the local ones, lets others through.
    const family = json(root, "app/schemas/AIContent.family.schema.json");
    expect(family).toMatchObject({
      required: ["$type"],
      if: { properties: { $type: { enum: ["acme.card"] } } },
      then: { $ref: "AIContent/acme.card.schema.json" },
    });
    expect(fs.existsSync(path.join(root, "app/schemas/AIAnnotation.family.schema.json"))).toBe(true);
  });
});

describe("this repository", () => {
  it("has its generated files current (run `npm run gen` after changing a tagged type)", async () => {
    const result = await generate({ cwd: REPO, check: true });
    expect(result.errors).toEqual([]);
    expect({ stale: result.stale, missing: result.missing, extra: result.extra }).toEqual({
      stale: [],
      missing: [],
      extra: [],
    });
  });
});
