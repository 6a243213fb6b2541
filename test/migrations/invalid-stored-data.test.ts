/**
 * Invalid stored data is not a migration bug: before a step runs, the registry checks the value
 * against the schema of its own (older) version, which the generated registry carries
 * (`TypeDefinition.storedVersions`), and a failing step on an invalid value names the data, the
 * version and the pointer. A step that returns an invalid value is blamed when the next one fails.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { generatedTypes } from "../../src/generated/registry.js";
import { defineMigration, MigrationError } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import type { TypeDefinition, Validator } from "../../src/runtime/registry/registry-types.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { envelope } from "./helpers.js";

const object = (properties: Record<string, unknown>, required: string[]) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});
const tag = (version: number) => ({ $type: { const: "acme.Notes" }, $version: { const: version } });
const V1 = object({ ...tag(1), notes: { type: "array", items: { type: "string" } } }, ["$type", "notes"]);
const V2 = object({ ...tag(2), notes: { type: "array", items: object({ text: { type: "string" } }, ["text"]) } }, [
  "$type",
  "$version",
  "notes",
]);
const V3 = object(
  {
    ...tag(3),
    notes: {
      type: "array",
      items: object({ text: { type: "string" }, pinned: { type: "boolean" } }, ["text", "pinned"]),
    },
  },
  ["$type", "$version", "notes"],
);

function registry(steps: { v1to2: (v: any) => unknown; v2to3: (v: any) => unknown }): TypeRegistry {
  const def: TypeDefinition = {
    $type: "acme.Notes",
    family: "ProviderState",
    version: 3,
    schema: V3,
    validate: new Ajv().compile(V3) as Validator,
    slots: [],
    storedVersions: [
      { $type: "acme.Notes", version: 1, schema: V1, file: "schemas/history/ProviderState/acme.Notes/v1.schema.json" },
      { $type: "acme.Notes", version: 2, schema: V2, file: "schemas/history/ProviderState/acme.Notes/v2.schema.json" },
    ],
  };
  return new TypeRegistry({
    types: [def],
    migrations: [
      defineMigration({ type: "acme.Notes", from: 1, to: 2, up: steps.v1to2 }),
      defineMigration({ type: "acme.Notes", from: 2, to: 3, up: steps.v2to3 }),
    ],
  });
}

const correct = {
  v1to2: (v: { notes: string[] }) => ({ notes: v.notes.map((text) => ({ text })) }),
  v2to3: (v: { notes: { text: string }[] }) => ({ notes: v.notes.map((n) => ({ ...n, pinned: false })) }),
};

function failure(run: () => unknown): MigrationError {
  try {
    run();
  } catch (error) {
    if (error instanceof MigrationError) return error;
    throw error;
  }
  throw new Error("expected a MigrationError");
}

describe("invalid stored data vs a migration bug, at run time", () => {
  it("a step failing on a value its own version's schema rejects names the stored data, the version and the pointer", () => {
    const error = failure(() =>
      registry(correct).upgrade({ $type: "acme.Notes", notes: 42 } as never, "/stateBag/acme.notes"),
    );
    expect(error.reason).toBe("invalid-data");
    expect(error.pointer).toBe("/stateBag/acme.notes/notes");
    expect(error.message.split("\n")[0]).toBe(
      'invalid stored data: "acme.Notes" v1 at /stateBag/acme.notes does not match version 1\'s schema (schemas/history/ProviderState/acme.Notes/v1.schema.json) at /stateBag/acme.notes/notes: must be array; migration of "acme.Notes" v1 -> v2 then failed on it: v.notes.map is not a function',
    );
    expect(error.details.hint).toMatch(/^the stored value is wrong, not the migration/);
  });

  it("loading a session with such a value reports invalid stored data at its pointer, and the hint says the data is wrong", async () => {
    const codec = defaultSessionCodec({ registry: registry(correct) });
    const text = envelope({ id: "s1", stateBag: { "acme.notes": { $type: "acme.Notes", notes: 42 } } });
    const error = await Promise.resolve()
      .then(() => codec.deserialize(text, "s1" as never))
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(error?.message).toContain(
      'invalid stored data: "acme.Notes" v1 at /session/stateBag/acme.notes does not match version 1\'s schema',
    );
    expect(error?.message).toContain("at /session/stateBag/acme.notes/notes: must be array");
    expect(error?.message).toContain(
      'hint: the stored value is wrong, not the migration: it does not match "acme.Notes" v1',
    );
  });

  it("a step failing on a valid stored value is the migration's fault, named with where it is defined", () => {
    const throwing = {
      ...correct,
      v1to2: (v: { notes: string[] }) => ({
        notes: v.notes.map((text) => (text === "b" ? JSON.parse("{") : { text })),
      }),
    };
    const error = failure(() => registry(throwing).upgrade({ $type: "acme.Notes", notes: ["a", "b"] } as never, ""));
    expect(error.reason).toBe("failed");
    expect(error.from).toBe(1);
    expect(error.message).toMatch(/^migration of "acme\.Notes" v1 -> v2 failed at \/: /);
    expect(error.details.hint).toMatch(/^the migration is defined at .*invalid-stored-data\.test\.ts:\d+$/);
  });

  it("a step that returns an invalid value is blamed when the next step fails on it", () => {
    const sloppy = { ...correct, v1to2: (v: { notes: string[] }) => ({ notes: v.notes }) }; // forgot to wrap the notes
    const strict = {
      ...sloppy,
      v2to3: (v: { notes: { text: string }[] }) => ({
        notes: v.notes.map((n) => ({ text: n.text.trim(), pinned: false })),
      }),
    };
    const error = failure(() => registry(strict).upgrade({ $type: "acme.Notes", notes: ["a"] } as never, ""));
    expect(error.reason).toBe("failed");
    expect([error.type, error.from, error.to]).toEqual(["acme.Notes", 1, 2]);
    expect(error.pointer).toBe("/notes/0");
    expect(error.message).toMatch(
      /^migration of "acme\.Notes" v1 -> v2 at \/ returned a value that does not match version 2's schema \(schemas\/history\/ProviderState\/acme\.Notes\/v2\.schema\.json\) at \/notes\/0: must be object; the next migration of "acme\.Notes" v2 -> v3 then failed on it: /,
    );
  });

  it("steps that carry an invalid stored value through to an invalid latest value: the data is named, not the last step", () => {
    const error = failure(() =>
      registry(correct).upgrade({ $type: "acme.Notes", notes: [1, 2] } as never, "/stateBag/acme.notes"),
    );
    expect(error.reason).toBe("invalid-data");
    expect([error.type, error.from, error.pointer]).toEqual(["acme.Notes", 1, "/stateBag/acme.notes/notes/0"]);
    expect(error.message.split("\n")[0]).toBe(
      'invalid stored data: "acme.Notes" v1 at /stateBag/acme.notes does not match version 1\'s schema (schemas/history/ProviderState/acme.Notes/v1.schema.json) at /stateBag/acme.notes/notes/0: must be string; migrated to "acme.Notes" v3, it does not match that version either (at /stateBag/acme.notes/notes/0/text: must be string)',
    );
  });

  it("a value that works stays loadable: the check only explains failures", () => {
    // Not valid v1 (an extra key a later compatible change at v1 could have allowed), migrates fine.
    const value = registry(correct).upgrade<{ notes: unknown[] }>(
      { $type: "acme.Notes", notes: ["a"], tags: [] } as never,
      "",
    );
    expect(value.notes).toEqual([{ text: "a", pinned: false }]);
  });

  it("the generated registry carries the frozen schema of every version a migration reads, family slots opaque", () => {
    const history = generatedTypes.find((t) => t.$type === "InMemoryChatHistoryState")!;
    expect(history.storedVersions?.map((s) => [s.$type, s.version, s.file])).toEqual([
      ["InMemoryChatHistoryState", 1, "schemas/history/ProviderState/InMemoryChatHistoryState/v1.schema.json"],
      ["InMemoryChatHistoryState", 2, "schemas/history/ProviderState/InMemoryChatHistoryState/v2.schema.json"],
    ]);
    expect(JSON.stringify(history.storedVersions)).not.toContain("$ref");
    const registry = new TypeRegistry({ types: generatedTypes });
    expect(
      registry.targets.storedProblems!("InMemoryChatHistoryState", 1, {
        $type: "InMemoryChatHistoryState",
        messages: 42,
      }),
    ).toEqual([
      {
        pointer: "/messages",
        message: "must be array",
        file: "schemas/history/ProviderState/InMemoryChatHistoryState/v1.schema.json",
      },
    ]);
    expect(
      registry.targets.storedProblems!("InMemoryChatHistoryState", 1, {
        $type: "InMemoryChatHistoryState",
        messages: [{ role: "user", contents: [{ $type: "text", text: "hi" }] }],
      }),
    ).toEqual([]);
  });
});
