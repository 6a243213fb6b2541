import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { MigrationDefinitionError, MigrationError, defineMigration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import type { TypeDefinition } from "../../src/runtime/registry/registry-types.js";
import {
  SessionValidationError,
  deserializeSession,
  deserializeSessions,
  serializeSession,
} from "../../src/runtime/persistence/serialization.js";
import { validateSession } from "../../src/runtime/validation/validate.js";
import { ajv, makeModelTypes } from "./model.js";

/** acme.Notes v3: { items: string[], count: integer }. v1 was { text }, v2 { items }. */
function notesRegistry(): TypeRegistry {
  const registry = new TypeRegistry({ source: "test model", types: makeModelTypes() });
  registry.register({
    $type: "acme.Notes",
    version: 3,
    schema: Type.Object({ items: Type.Array(Type.String()), count: Type.Integer() }),
  });
  registry.addMigration(
    defineMigration<{ text: string }, { items: string[] }>({
      type: "acme.Notes",
      from: 1,
      to: 2,
      up: (v) => ({ items: v.text.split(";") }),
    }),
    defineMigration<{ items: string[] }, { items: string[]; count: number }>({
      type: "acme.Notes",
      from: 2,
      to: 3,
      up: (v) => ({ ...v, count: v.items.length }),
    }),
  );
  return registry;
}

const env = (session: unknown) => JSON.stringify({ format: "statebag.session", formatVersion: 1, session });

describe("migration chains", () => {
  it("runs v1 -> v2 -> v3 on load, before validation, and the result saves at the latest version", () => {
    const registry = notesRegistry();
    const loaded = deserializeSession(
      env({
        id: "a",
        stateBag: { n: { $type: "acme.Notes", text: "a;b" }, m: { $type: "acme.Notes", $version: 2, items: ["x"] } },
      }),
      { registry },
    );
    expect(loaded.stateBag.n).toEqual({ $type: "acme.Notes", $version: 3, items: ["a", "b"], count: 2 });
    expect(loaded.stateBag.m).toEqual({ $type: "acme.Notes", $version: 3, items: ["x"], count: 1 });
    expect(JSON.parse(serializeSession(loaded, { registry, validate: true })).session.stateBag.n.$version).toBe(3);
  });

  it("registry.upgrade never modifies its input and returns current values as they are", () => {
    const registry = notesRegistry();
    const old = { $type: "acme.Notes", text: "a" };
    const snapshot = structuredClone(old);
    const up = registry.upgrade(old, "/x");
    expect(up).toEqual({ $type: "acme.Notes", $version: 3, items: ["a"], count: 1 });
    expect(old).toEqual(snapshot);
    const current = { $type: "acme.Notes", $version: 3, items: [], count: 0 };
    expect(registry.upgrade(current)).toBe(current);
    expect(registry.needsUpgrade(old)).toBe(true);
    expect(registry.needsUpgrade(current)).toBe(false);
  });

  it("a caller-owned parsed document is not modified; the migrated result is a copy", () => {
    const registry = notesRegistry();
    const doc = JSON.parse(
      env({
        id: "a",
        stateBag: {
          n: { $type: "acme.Notes", text: "a" },
          k: { $type: "acme.Notes", $version: 3, items: [], count: 0 },
        },
      }),
    );
    const before = structuredClone(doc);
    const loaded = deserializeSession(doc, { registry });
    expect(doc).toEqual(before);
    expect(loaded).not.toBe(doc.session);
    expect(loaded.stateBag.n).toMatchObject({ $version: 3, count: 1 });
  });

  it("deserializeSessions migrates, reports and preserves like deserializeSession, with /sessions/<i> pointers", () => {
    const registry = notesRegistry();
    const sessions = [
      { id: "a", stateBag: { k: { $type: "acme.Notes", $version: 3, items: [], count: 0 } } },
      { id: "b", stateBag: { n: { $type: "acme.Notes", text: "a;b" }, u: { $type: "x.Unknown", keep: 1 } } },
    ];
    const doc = { format: "statebag.sessions", formatVersion: 1, sessions };
    const before = structuredClone(doc);
    const migrated: unknown[] = [];
    const preserved: unknown[] = [];
    const options = {
      registry,
      onMigrated: (m: unknown[]) => migrated.push(...m),
      onPreserved: (p: unknown[]) => preserved.push(...p),
    };
    const loaded = deserializeSessions(doc, options);
    expect(doc).toEqual(before); // caller-owned: migrated into a copy
    expect(loaded[1].stateBag.n).toEqual({ $type: "acme.Notes", $version: 3, items: ["a", "b"], count: 2 });
    expect(loaded[1].stateBag.u).toEqual({ $type: "x.Unknown", keep: 1 });
    expect(migrated).toEqual([
      { pointer: "/sessions/1/stateBag/n", fromType: "acme.Notes", from: 1, toType: "acme.Notes", to: 3 },
    ]);
    expect(preserved).toMatchObject([
      { pointer: "/sessions/1/stateBag/u", $type: "x.Unknown", reason: "unknown-type" },
    ]);
    // the same from text, and the same error shape as deserializeSession on a problem
    expect(deserializeSessions(JSON.stringify(doc), { registry })).toEqual(loaded);
    const bad = {
      ...doc,
      sessions: [sessions[0], { id: "c", stateBag: { n: { $type: "acme.Notes", $version: 3, items: "x", count: 1 } } }],
    };
    let error: unknown;
    try {
      deserializeSessions(bad, options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SessionValidationError);
    expect((error as Error).message).toMatch(/^cannot load 2 sessions: 1 problem/);
    expect((error as SessionValidationError).problems.map((p) => p.pointer)).toEqual(["/sessions/1/stateBag/n/items"]);
    expect(migrated).toHaveLength(1); // nothing reported for a document that failed
  });

  it("validateSession checks the migrated value but leaves the input alone", () => {
    const registry = notesRegistry();
    const session = { id: "a", stateBag: { n: { $type: "acme.Notes", text: "a" } } };
    expect(validateSession(session, { registry })).toEqual({ ok: true, problems: [], preserved: [] });
    expect(session.stateBag.n).toEqual({ $type: "acme.Notes", text: "a" });
    // a migration whose output does not match the latest schema is a schema problem of the result
    registry.addMigration(
      defineMigration({
        type: "acme.Legacy",
        from: 1,
        to: { type: "acme.Notes", version: 2 },
        up: (v: { words: string }) => ({ items: v.words }),
      }),
    );
    const bad = validateSession(
      { id: "a", stateBag: { l: { $type: "acme.Legacy", words: "not an array" } } },
      { registry },
    );
    expect(bad.problems.map((p) => [p.code, p.pointer, p.$type, p.expected])).toEqual([
      ["schema", "/stateBag/l/items", "acme.Notes", "array"],
    ]);
    expect(bad.problems[0].hint).toBe(
      'the value was migrated from "acme.Legacy" v1 to "acme.Notes" v3 on load: check what the migrations produce',
    );
  });

  it("errors name the type, the versions and the pointer; the input is untouched", () => {
    const registry = notesRegistry();
    registry.addMigration(
      defineMigration({
        type: "acme.Broken",
        from: 1,
        to: { type: "acme.Notes", version: 2 },
        up: (v: { items?: string[] }) => {
          v.items = ["mutated"];
          throw new Error("cannot read the old format");
        },
      }),
    );
    const value = { $type: "acme.Broken", keep: true };
    const err = (() => {
      try {
        registry.upgrade(value, "/session/stateBag/b");
      } catch (e) {
        return e as MigrationError;
      }
    })();
    expect(err).toBeInstanceOf(MigrationError);
    expect(err!.message).toMatch(
      /^migration of "acme.Broken" v1 -> "acme.Notes" v2 failed at \/session\/stateBag\/b: cannot read the old format/,
    );
    expect([err!.type, err!.from, err!.to, err!.pointer, err!.reason]).toEqual([
      "acme.Broken",
      1,
      2,
      "/session/stateBag/b",
      "failed",
    ]);
    expect(err!.hint).toMatch(/migrations\.test\.ts:\d+/);
    expect(value).toEqual({ $type: "acme.Broken", keep: true });

    const text = env({
      id: "a",
      stateBag: { b: { $type: "acme.Broken" }, n: { $type: "acme.Notes", $version: 2, items: ["ok"] } },
    });
    const loadErr = (() => {
      try {
        deserializeSession(text, { registry });
      } catch (e) {
        return e as SessionValidationError;
      }
    })();
    expect(loadErr).toBeInstanceOf(SessionValidationError);
    expect(loadErr!.problems.map((p) => [p.code, p.pointer])).toEqual([["migration-failed", "/session/stateBag/b"]]);
  });

  it("a gap in the chain is an old-version error naming both versions", () => {
    const registry = new TypeRegistry();
    registry.register({ $type: "acme.Gap", version: 3, schema: Type.Object({}) });
    registry.addMigration(defineMigration({ type: "acme.Gap", from: 2, to: 3, up: (v) => v }));
    const result = validateSession({ id: "a", stateBag: { g: { $type: "acme.Gap" } } }, { registry });
    expect(result.problems.map((p) => [p.code, p.pointer])).toEqual([["old-version", "/stateBag/g"]]);
    expect(result.problems[0].message).toBe(
      '"acme.Gap" v1 at /stateBag/g is older than the latest v3 and no migration reads v1',
    );
  });

  it("a returned non-object is an error", () => {
    const registry = new TypeRegistry();
    registry.register({ $type: "acme.R", version: 2, schema: Type.Object({}) });
    registry.addMigration(defineMigration({ type: "acme.R", from: 1, to: 2, up: () => 42 }));
    expect(() => registry.upgrade({ $type: "acme.R" })).toThrow(/returned number, not an object/);
  });
});

describe("renames", () => {
  const approval = (formerNames?: string[]): TypeDefinition => {
    const schema = {
      type: "object",
      properties: { $type: { const: "toolApprovalRequest2" }, $version: { const: 1 }, requestId: { type: "string" } },
      required: ["$type", "requestId"],
      additionalProperties: false,
    };
    return {
      $type: "toolApprovalRequest2",
      family: "AIContent",
      version: 1,
      schema,
      validate: ajv.compile(schema),
      slots: [],
      ...(formerNames ? { formerNames } : {}),
    };
  };
  const history = (contents: unknown[]) => ({
    $type: "InMemoryChatHistoryState",
    messages: [{ role: "assistant", contents }],
  });

  it("a former name with no explicit step is a pure rename at the same version", () => {
    const registry = TypeRegistry.compose(new TypeRegistry({ types: makeModelTypes() }), {
      source: "app",
      types: [approval(["functionApprovalRequest2"])],
    });
    const loaded = deserializeSession(
      env({ id: "a", stateBag: { h: history([{ requestId: "r1", $type: "functionApprovalRequest2" }]) } }),
      { registry, strict: true },
    );
    expect((loaded.stateBag.h as any).messages[0].contents[0]).toEqual({
      requestId: "r1",
      $type: "toolApprovalRequest2",
    });
  });

  it("an explicit rename step, nested inside a migrated state value", () => {
    const registry = TypeRegistry.compose(new TypeRegistry({ types: makeModelTypes() }), {
      source: "app",
      types: [approval()],
    });
    registry.register({
      $type: "acme.Inbox",
      version: 2,
      schema: Type.Object({ pending: Type.Array(Type.Any()) }),
      slots: [{ path: ["pending", "*"], family: "AIContent" }],
    });
    registry.addMigration(
      defineMigration({
        type: "oldApproval",
        from: 1,
        to: { type: "toolApprovalRequest2", version: 1 },
        up: (v: { id: string }) => ({ requestId: v.id }),
      }),
      defineMigration({ type: "acme.Inbox", from: 1, to: 2, up: (v: { queue: unknown[] }) => ({ pending: v.queue }) }),
    );
    const text = env({
      id: "a",
      stateBag: {
        i: {
          $type: "acme.Inbox",
          queue: [
            { $type: "oldApproval", id: "r9" },
            { $type: "text", text: "t" },
          ],
        },
      },
    });
    const loaded = deserializeSession(text, { registry, strict: true });
    expect(loaded.stateBag.i).toEqual({
      $type: "acme.Inbox",
      $version: 2,
      pending: [
        { $type: "toolApprovalRequest2", requestId: "r9" },
        { $type: "text", text: "t" },
      ],
    });
    // and the same from a caller-owned object: the caller's document is untouched
    const doc = JSON.parse(text);
    const before = structuredClone(doc);
    expect(deserializeSession(doc, { registry })).toEqual(loaded);
    expect(doc).toEqual(before);
  });

  it("a rename into another family is a wrong-family error", () => {
    const registry = new TypeRegistry({ types: makeModelTypes() });
    registry.addMigration(
      defineMigration({
        type: "oldState",
        from: 1,
        to: { type: "text", version: 1 },
        up: (v) => ({ ...v, text: "x" }),
      }),
    );
    const result = validateSession({ id: "a", stateBag: { s: { $type: "oldState" } } }, { registry });
    expect(result.problems.map((p) => p.code)).toEqual(["wrong-family"]);
  });

  it("rename loops are detected", () => {
    const registry = new TypeRegistry();
    registry.addMigration(
      defineMigration({ type: "a.A", from: 1, to: { type: "a.B", version: 1 }, up: (v) => v }),
      defineMigration({ type: "a.B", from: 1, to: { type: "a.A", version: 1 }, up: (v) => v }),
    );
    expect(() => registry.upgrade({ $type: "a.A" }, "/p")).toThrow(/loop back to "a.A" v1/);
  });
});

describe("defining migrations", () => {
  it("rejects malformed steps", () => {
    expect(() => defineMigration({ type: "a.X", from: 2, to: 2, up: (v) => v })).toThrow(MigrationDefinitionError);
    expect(() => defineMigration({ type: "a.X", from: 2, to: 1, up: (v) => v })).toThrow(/must raise the version/);
    expect(() => defineMigration({ type: "a.X", from: 0, to: 1, up: (v) => v })).toThrow(/"from" must be an integer/);
    expect(() => defineMigration({ type: "", from: 1, to: 2, up: (v) => v })).toThrow(/non-empty string/);
    expect(() => defineMigration({ type: "a.X", from: 1, to: 2 } as never)).toThrow(/"up" must be a function/);
  });

  it("rejects two steps for the same (type, from), steps from the latest version, and renames of live types", () => {
    const registry = notesRegistry();
    expect(() => registry.addMigration(defineMigration({ type: "acme.Notes", from: 1, to: 3, up: (v) => v }))).toThrow(
      /two migrations read "acme.Notes" v1/,
    );
    expect(() => registry.addMigration(defineMigration({ type: "acme.Notes", from: 3, to: 4, up: (v) => v }))).toThrow(
      /latest "acme.Notes" is v3/,
    );
    expect(() =>
      registry.addMigration(
        defineMigration({ type: "acme.Notes", from: 1, to: { type: "acme.Other", version: 1 }, up: (v) => v }),
      ),
    ).toThrow(/still a registered type/);
  });

  it("composition carries migrations and refuses duplicate steps", () => {
    const m = defineMigration({ type: "acme.Notes", from: 1, to: 2, up: (v) => v });
    const composed = TypeRegistry.compose(notesRegistry());
    expect(composed.migrations()).toHaveLength(2);
    expect(() => TypeRegistry.compose(notesRegistry(), { source: "plugin", migrations: [m] })).toThrow(
      /two migrations read "acme.Notes" v1/,
    );
  });
});
