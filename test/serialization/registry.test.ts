import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import type { StatebagError } from "../../src/runtime/core/errors.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import { RegistryError } from "../../src/runtime/registry/registry-error.js";
import type { TypeDefinition } from "../../src/runtime/registry/registry-types.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { validateSession, validateValue } from "../../src/runtime/validation/validate.js";
import { makeModelTypes } from "./model.js";

function thrown(f: () => unknown): StatebagError {
  try {
    f();
  } catch (e) {
    return e as StatebagError;
  }
  throw new Error("expected a throw");
}

describe("runtime registration with TypeBox", () => {
  const Summary = Type.Object({
    summary: Type.String(),
    updatedAt: Type.Optional(Type.String({ format: "date-time" })),
    stats: Type.Optional(Type.Object({ turns: Type.Integer({ minimum: 0 }) })),
    tags: Type.Optional(Type.Record(Type.String(), Type.String())),
  });

  it("compiles the schema, adds $type/$version, and validates values", () => {
    const registry = new TypeRegistry();
    const def = registry.register({ $type: "acme.Summary", version: 2, schema: Summary });
    expect(def.family).toBe("ProviderState");
    expect(def.source).toMatch(/registry\.test\.ts:\d+$/);
    expect(Object.getOwnPropertySymbols(def.schema)).toEqual([]); // TypeBox symbols stripped
    expect(JSON.parse(JSON.stringify(def.schema))).toEqual(def.schema); // plain JSON
    expect(registry.get("acme.Summary")).toBe(def);

    const ok = {
      $type: "acme.Summary",
      $version: 2,
      summary: "s",
      updatedAt: "2025-01-31T12:00:00+02:00",
      stats: { turns: 3 },
      tags: { a: "b" },
    };
    expect(validateValue(ok, { registry }).ok).toBe(true);

    const bad = validateValue(
      {
        $type: "acme.Summary",
        $version: 2,
        summary: 1,
        updatedAt: "2025-02-30T00:00:00Z",
        stats: { turns: -1, extra: 1 },
      },
      { registry },
    );
    expect(bad.problems.map((p) => [p.pointer, p.expected])).toEqual([
      ["/summary", "string"],
      ["/updatedAt", 'a "date-time" string'],
      ["/stats/extra", 'only "turns"'],
      ["/stats/turns", "a number >= 0"],
    ]);
  });

  it("closed model by default: unknown properties are errors (top level and nested); open: true keeps schemas as written", () => {
    const closed = new TypeRegistry();
    closed.register({ $type: "acme.Summary", version: 2, schema: Summary });
    const extra = { $type: "acme.Summary", $version: 2, summary: "s", surprise: true };
    expect(validateValue(extra, { registry: closed }).problems.map((p) => p.message)).toEqual([
      '/surprise: unknown property "surprise" in "acme.Summary" v2',
    ]);
    const open = new TypeRegistry();
    open.register({ $type: "acme.Summary", version: 2, schema: Summary, open: true });
    expect(validateValue(extra, { registry: open }).ok).toBe(true);
    // an explicit additionalProperties: true is respected even when closed
    const explicit = new TypeRegistry();
    explicit.register({ $type: "acme.Bag", schema: Type.Object({ a: Type.String() }, { additionalProperties: true }) });
    expect(validateValue({ $type: "acme.Bag", a: "x", b: 1 }, { registry: explicit }).ok).toBe(true);
  });

  it("intersections stay satisfiable (members are not closed one by one)", () => {
    const registry = new TypeRegistry();
    registry.register({
      $type: "acme.Both",
      schema: Type.Object({
        both: Type.Intersect([Type.Object({ p: Type.String() }), Type.Object({ q: Type.String() })]),
      }),
    });
    expect(validateValue({ $type: "acme.Both", both: { p: "1", q: "2" } }, { registry }).ok).toBe(true);
  });

  it("version rules: v1 may omit $version; v2 requires it; a $version of another version is no match", () => {
    const registry = new TypeRegistry();
    registry.register({ $type: "acme.One", schema: Type.Object({ x: Type.Number() }) });
    expect(validateValue({ $type: "acme.One", x: 1 }, { registry }).ok).toBe(true);
    expect(validateValue({ $type: "acme.One", $version: 1, x: 1 }, { registry }).ok).toBe(true);
    const two = new TypeRegistry();
    two.register({ $type: "acme.Two", version: 2, schema: Type.Object({ x: Type.Number() }) });
    expect(validateValue({ $type: "acme.Two", $version: 2, x: 1 }, { registry: two }).ok).toBe(true);
    expect(validateValue({ $type: "acme.Two", x: 1 }, { registry: two }).problems[0].code).toBe("old-version");
  });

  it("slots: positions become opaque in the schema and are dispatched by the walker", () => {
    const registry = TypeRegistry.compose(new TypeRegistry({ types: makeModelTypes() }));
    registry.register({
      $type: "acme.Notes",
      schema: Type.Object({
        pinned: Type.Array(Type.Object({ id: Type.String() })),
        byTopic: Type.Optional(Type.Record(Type.String(), Type.Any())),
      }),
      slots: [
        { path: ["pinned", "*"], family: "AIContent" },
        { path: ["byTopic", "*"], family: "AIContent" },
      ],
    });
    const good = {
      id: "s",
      stateBag: {
        n: {
          $type: "acme.Notes",
          pinned: [{ $type: "text", text: "a" }],
          byTopic: { x: { $type: "uri", uri: "u", mediaType: "m" } },
        },
      },
    };
    expect(validateSession(good, { registry }).problems).toEqual([]);
    const bad = {
      id: "s",
      stateBag: {
        n: {
          $type: "acme.Notes",
          pinned: [{ $type: "text" }, { id: "not tagged" }],
          byTopic: { x: { $type: "acme.Notes", pinned: [] } },
        },
      },
    };
    expect(validateSession(bad, { registry }).problems.map((p) => [p.code, p.pointer])).toEqual([
      ["schema", "/stateBag/n/pinned/0/text"],
      ["missing-type", "/stateBag/n/pinned/1"],
      ["wrong-family", "/stateBag/n/byTopic/x"],
    ]);
  });

  it("registration errors: duplicate $type, bad ids, reserved names, non-object schemas, $type mismatch, unknown formats", () => {
    const registry = new TypeRegistry();
    registry.register({ $type: "acme.Summary", schema: Summary });
    const dup = thrown(() => registry.register({ $type: "acme.Summary", version: 2, schema: Summary }));
    expect(dup).toBeInstanceOf(RegistryError);
    expect(dup.message).toMatch(
      /register\("acme.Summary"\): the type is already registered by runtime registration \(.*registry\.test\.ts:\d+\)/,
    );
    for (const id of ["__proto__", "constructor", "toString", "prototype"])
      expect(thrown(() => registry.register({ $type: id, schema: Summary })).message).toMatch(/reserved/);
    for (const id of ["", "has space", "9lives", 42])
      expect(thrown(() => registry.register({ $type: id as string, schema: Summary })).message).toMatch(
        /not a valid \$type id/,
      );
    expect(
      thrown(() => registry.register({ $type: "acme.U", schema: Type.Union([Type.String(), Type.Number()]) })).message,
    ).toMatch(/must describe an object/);
    expect(
      thrown(() => registry.register({ $type: "acme.M", schema: Type.Object({ $type: Type.Literal("acme.Other") }) }))
        .message,
    ).toMatch(/schema's \$type is "acme.Other"/);
    const fmt = thrown(() =>
      registry.register({ $type: "acme.F", schema: Type.Object({ e: Type.String({ format: "acme-color" }) }) }),
    );
    expect(fmt.message).toMatch(/unknown format "acme-color"/);
    expect(fmt.hint).toMatch(/formats:/);
    const withFormats = new TypeRegistry({ formats: { "acme-color": /^#/ } });
    withFormats.register({ $type: "acme.F", schema: Type.Object({ e: Type.String({ format: "acme-color" }) }) });
    expect(validateValue({ $type: "acme.F", e: "nope" }, { registry: withFormats }).problems[0].expected).toBe(
      'a "acme-color" string',
    );
    // ajv-formats' set is built in (issue #34): email is checked without any option, with a hint.
    const builtIn = new TypeRegistry();
    builtIn.register({ $type: "acme.E", schema: Type.Object({ e: Type.String({ format: "email" }) }) });
    const [problem] = validateValue({ $type: "acme.E", e: "nope" }, { registry: builtIn }).problems;
    expect(problem).toMatchObject({ expected: 'a "email" string', hint: 'email: e.g. "name@example.com"' });
    expect(validateValue({ $type: "acme.E", e: "a@example.com" }, { registry: builtIn }).problems).toEqual([]);
  });

  it("schemas with __proto__ property names do not touch prototypes", () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"ok":{"type":"number"}}}');
    const registry = new TypeRegistry();
    const def = registry.register({ $type: "acme.Weird", schema });
    expect(Object.hasOwn(def.schema.properties as object, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(def.schema.properties)).toBe(Object.prototype);
    // ajv does not compile a property named "__proto__" (it never checks it), so under the closed
    // model such a key is reported as unknown: rejected clearly, never silently accepted.
    const result = validateValue(JSON.parse('{"$type":"acme.Weird","__proto__":"s","ok":1}'), { registry });
    expect(result.problems.map((p) => [p.pointer, p.message])).toEqual([
      ["/__proto__", '/__proto__: unknown property "__proto__" in "acme.Weird" v1'],
    ]);
    expect(({} as Record<string, unknown>).ok).toBeUndefined();
  });

  it("runtime-registered types round-trip through (de)serialization", () => {
    const registry = new TypeRegistry();
    registry.register({ $type: "acme.Summary", version: 2, schema: Summary });
    const session = { id: "a", stateBag: { s: { $type: "acme.Summary", $version: 2, summary: "hello" } } };
    expect(deserializeSession(serializeSession(session, { registry, validate: true }), { registry })).toEqual(session);
  });
});

describe("composition", () => {
  const def = (over: Partial<TypeDefinition> & { $type: string }): TypeDefinition => ({
    family: "ProviderState",
    version: 1,
    schema: {},
    validate: () => true,
    slots: [],
    ...over,
  });

  it("composes parts and keeps each definition's origin", () => {
    const statebag = new TypeRegistry({
      source: "statebag",
      types: [def({ $type: "text", family: "AIContent", source: "src/runtime/messages.ts:58", name: "TextContent" })],
    });
    const app = { source: "my-app", types: [def({ $type: "acme.State" })] };
    const runtime = new TypeRegistry();
    runtime.register({ $type: "acme.Runtime", schema: Type.Object({}) });
    const all = TypeRegistry.compose(statebag, app, runtime);
    expect(all.types().map((d) => d.$type)).toEqual(["text", "acme.State", "acme.Runtime"]);
    expect(all.describe("text")).toBe('"text" v1 from statebag (TextContent at src/runtime/messages.ts:58)');
    expect(all.describe("acme.Runtime")).toMatch(/^"acme.Runtime" v1 from runtime registration/);
    // composing the same registry twice is harmless (same definitions)
    expect(TypeRegistry.compose(statebag, statebag).size).toBe(1);
  });

  it("the same $type from two sources is an error naming both", () => {
    const statebag = new TypeRegistry({
      source: "statebag",
      types: [def({ $type: "text", family: "AIContent", source: "src/runtime/messages.ts:58", name: "TextContent" })],
    });
    const err = thrown(() =>
      TypeRegistry.compose(statebag, {
        source: "my-app",
        types: [def({ $type: "text", family: "AIContent", source: "app/content.ts:3", name: "MyText" })],
      }),
    );
    expect(err).toBeInstanceOf(RegistryError);
    expect(err.message).toBe(
      '$type "text" is defined twice: by statebag (TextContent at src/runtime/messages.ts:58) and by my-app (MyText at app/content.ts:3)',
    );
    expect(err.hint).toBe(
      '$type ids are unique across the whole registry; rename one (namespace your own, e.g. "acme.text")',
    );
    const runtime = new TypeRegistry({ source: "statebag", types: [def({ $type: "acme.X" })] });
    expect(() => runtime.register({ $type: "acme.X", schema: Type.Object({}) })).toThrow(
      /already registered by statebag/,
    );
  });

  it("a $type that is another type's former name is an error, in either order", () => {
    const renamed = {
      source: "statebag",
      types: [
        def({
          $type: "toolApprovalRequest",
          family: "AIContent",
          formerNames: ["functionApprovalRequest"],
          source: "src/runtime/messages.ts:120",
        }),
      ],
    };
    const reuse = {
      source: "my-app",
      types: [def({ $type: "functionApprovalRequest", family: "AIContent", source: "app/x.ts:1" })],
    };
    expect(thrown(() => TypeRegistry.compose(renamed, reuse)).message).toMatch(
      /\$type "functionApprovalRequest" from my-app \(app\/x.ts:1\) is a former name of "toolApprovalRequest" from statebag \(src\/runtime\/messages.ts:120\)/,
    );
    expect(thrown(() => TypeRegistry.compose(reuse, renamed)).message).toMatch(
      /"functionApprovalRequest", a former name of "toolApprovalRequest" from statebag .* is registered as a type by my-app/,
    );
    const claimTwice = {
      source: "other",
      types: [def({ $type: "approvalRequest2", family: "AIContent", formerNames: ["functionApprovalRequest"] })],
    };
    expect(thrown(() => TypeRegistry.compose(renamed, claimTwice)).message).toMatch(/claimed as a former name by both/);
    const registry = TypeRegistry.compose(renamed);
    expect(() =>
      registry.register({ $type: "functionApprovalRequest", family: "AIContent", schema: Type.Object({}) }),
    ).toThrow(/former name of "toolApprovalRequest"/);
  });

  it("malformed definitions are refused with the part named", () => {
    expect(() => TypeRegistry.compose({ source: "gen", types: [def({ $type: "x", version: 0 })] })).toThrow(
      /gen: "x" has version 0/,
    );
    expect(() =>
      TypeRegistry.compose({ source: "gen", types: [def({ $type: "x", slots: [{ path: [], family: "AIContent" }] })] }),
    ).toThrow(/malformed slot/);
    expect(() =>
      TypeRegistry.compose({ source: "gen", types: [def({ $type: "x", validate: undefined as never })] }),
    ).toThrow(/no validate function/);
  });
});

describe("defaultRegistry", () => {
  it("is built once from the generated registry", () => {
    const a = defaultRegistry();
    expect(defaultRegistry()).toBe(a);
    for (const d of a.types()) expect(typeof d.validate).toBe("function");
    // an empty session loads with the default registry
    expect(deserializeSession(serializeSession({ id: "a", stateBag: {} })).id).toBe("a");
  });
});
