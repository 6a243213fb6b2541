/**
 * Migration chains on runtime-registered (TypeBox) types and statebag's own: multi-step chains,
 * what goes wrong and how it is reported (type, versions, pointer), data that is newer than the
 * code, and renames. Stored data is never modified by a failed load or a failed bulk migration.
 */
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { MigrationError, defineMigration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import { RegistryError } from "../../src/runtime/registry/registry-error.js";
import {
  type SessionValidationError,
  deserializeSession,
  serializeSession,
  type MigratedValue,
} from "../../src/runtime/persistence/serialization.js";
import type { PreservedValue } from "../../src/runtime/core/problems.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { migrateStore } from "../../src/runtime/stores/migrate.js";
import { memoryBackend } from "../stores/helpers.js";
import { envelope } from "./helpers.js";
import { seededStore } from "./store-helpers.js";

/** acme.Profile v4 = { name, emails[], tier }. v1 { fullName, email }, v2 { name, email }, v3 { name, emails[] }. */
function profileRegistry(step3?: (v: any) => unknown): TypeRegistry {
  const registry = TypeRegistry.compose(defaultRegistry());
  registry.register({
    $type: "acme.Profile",
    version: 4,
    schema: Type.Object({
      name: Type.String(),
      emails: Type.Array(Type.String({ minLength: 3 })),
      tier: Type.Union([Type.Literal("free"), Type.Literal("pro")]),
    }),
  });
  registry.addMigration(
    defineMigration({
      type: "acme.Profile",
      from: 1,
      to: 2,
      up: ({ fullName, ...rest }: any) => ({ ...rest, name: fullName }),
    }),
    defineMigration({
      type: "acme.Profile",
      from: 2,
      to: 3,
      up: ({ email, ...rest }: any) => ({ ...rest, emails: email ? [email] : [] }),
    }),
    defineMigration({ type: "acme.Profile", from: 3, to: 4, up: step3 ?? ((v: any) => ({ ...v, tier: "free" })) }),
  );
  return registry;
}

const v1Profile = { $type: "acme.Profile", fullName: "Ada Lovelace", email: "ada@example.org" };

function caught<T extends Error>(fn: () => unknown): T {
  try {
    fn();
  } catch (error) {
    return error as T;
  }
  throw new Error("expected an error");
}

describe("chains on a runtime-registered (TypeBox) type", () => {
  it("v1 -> v2 -> v3 -> v4 on load, reported value by value, and saved at v4", () => {
    const registry = profileRegistry();
    const migrated: MigratedValue[][] = [];
    const session = deserializeSession(
      envelope({
        id: "p",
        stateBag: { profile: v1Profile, same: { $type: "acme.Profile", $version: 3, name: "B", emails: [] } },
      }),
      {
        registry,
        onMigrated: (m) => migrated.push(m),
      },
    );
    expect(session.stateBag.profile).toEqual({
      $type: "acme.Profile",
      $version: 4,
      name: "Ada Lovelace",
      emails: ["ada@example.org"],
      tier: "free",
    });
    expect(migrated).toEqual([
      [
        { pointer: "/session/stateBag/profile", fromType: "acme.Profile", from: 1, toType: "acme.Profile", to: 4 },
        { pointer: "/session/stateBag/same", fromType: "acme.Profile", from: 3, toType: "acme.Profile", to: 4 },
      ],
    ]);
    expect(JSON.parse(serializeSession(session, { registry, validate: true })).session.stateBag.profile.$version).toBe(
      4,
    );
  });

  it("a throwing step: MigrationError naming type, from, to and pointer; the stored text is left as it was", async () => {
    const registry = profileRegistry(() => {
      throw new Error("tier service unavailable");
    });
    const error = caught<MigrationError>(() => registry.upgrade(v1Profile, "/session/stateBag/profile"));
    expect(error).toBeInstanceOf(MigrationError);
    expect([error.type, error.from, error.to, error.pointer, error.reason]).toEqual([
      "acme.Profile",
      3,
      4,
      "/session/stateBag/profile",
      "failed",
    ]);
    expect(error.message).toContain(
      'migration of "acme.Profile" v3 -> v4 failed at /session/stateBag/profile: tier service unavailable',
    );

    const load = caught<SessionValidationError>(() =>
      deserializeSession(envelope({ id: "p", stateBag: { profile: v1Profile } }), { registry }),
    );
    expect(load.problems.map((p) => [p.code, p.pointer, p.$type])).toEqual([
      ["migration-failed", "/session/stateBag/profile", "acme.Profile"],
    ]);

    const s = await seededStore(memoryBackend);
    await s.seed({ id: "p", stateBag: { profile: v1Profile } });
    const before = await s.dump();
    const report = await migrateStore(s.store, { registry });
    expect(report.failed).toEqual([
      expect.objectContaining({
        id: "p",
        pointer: "/session/stateBag/profile",
        code: "migration-failed",
        message: expect.stringContaining('"acme.Profile" v3 -> v4 failed'),
      }),
    ]);
    expect(await s.dump()).toEqual(before);
    await s.done();
  });

  it("an invalid result: a schema problem at the pointer, naming the type and both versions; nothing written", async () => {
    const registry = profileRegistry((v) => ({ ...v, tier: "gold" }));
    const load = caught<SessionValidationError>(() =>
      deserializeSession(envelope({ id: "p", stateBag: { profile: v1Profile } }), { registry }),
    );
    expect(load.problems).toHaveLength(1);
    expect(load.problems[0]).toMatchObject({
      code: "schema",
      pointer: "/session/stateBag/profile/tier",
      $type: "acme.Profile",
    });
    expect(load.problems[0].hint).toContain('migrated from "acme.Profile" v1 to "acme.Profile" v4 on load');

    const s = await seededStore(memoryBackend);
    await s.seed({ id: "p", stateBag: { profile: v1Profile } });
    const before = await s.dump();
    const dry = await migrateStore(s.store, { registry, dryRun: true });
    const real = await migrateStore(s.store, { registry });
    for (const report of [dry, real])
      expect(report.failed).toEqual([
        expect.objectContaining({ id: "p", pointer: "/session/stateBag/profile/tier", code: "schema" }),
      ]);
    expect(await s.dump()).toEqual(before);
    await s.done();
  });

  it("a gap in the chain names the type and both versions", () => {
    const registry = TypeRegistry.compose(defaultRegistry());
    registry.register({ $type: "acme.Gap", version: 3, schema: Type.Object({}) });
    registry.addMigration(defineMigration({ type: "acme.Gap", from: 2, to: 3, up: (v) => v }));
    const load = caught<SessionValidationError>(() =>
      deserializeSession(envelope({ id: "g", stateBag: { g: { $type: "acme.Gap" } } }), { registry }),
    );
    expect(load.problems.map((p) => [p.code, p.pointer])).toEqual([["old-version", "/session/stateBag/g"]]);
    expect(load.message).toContain(
      '"acme.Gap" v1 at /session/stateBag/g is older than the latest v3 and no migration reads v1',
    );
  });
});

describe("data newer than the code", () => {
  const newer = { $type: "InMemoryChatHistoryState", $version: 7, messages: [], pinned: ["m-1"] };

  it("a state newer than the registry is kept verbatim (reported), and saved back unchanged", () => {
    const preserved: PreservedValue[] = [];
    const session = deserializeSession(envelope({ id: "n", stateBag: { h: newer } }), {
      onPreserved: (p) => preserved.push(...p),
    });
    expect(session.stateBag.h).toEqual(newer);
    expect(preserved).toEqual([
      expect.objectContaining({
        pointer: "/session/stateBag/h",
        $type: "InMemoryChatHistoryState",
        version: 7,
        reason: "newer-version",
      }),
    ]);
    expect(JSON.parse(serializeSession(session, { validate: true })).session.stateBag.h).toEqual(newer);
  });

  it("strict refuses it, naming both versions", () => {
    const error = caught<SessionValidationError>(() =>
      deserializeSession(envelope({ id: "n", stateBag: { h: newer } }), { strict: true }),
    );
    expect(error.problems.map((p) => [p.code, p.pointer])).toEqual([["newer-version", "/session/stateBag/h"]]);
    expect(error.message).toContain(
      '"InMemoryChatHistoryState" v7 at /session/stateBag/h is newer than this registry\'s v3',
    );
  });

  it("a newer content nested in an old history: the history migrates, the content is kept verbatim", () => {
    const old = {
      $type: "InMemoryChatHistoryState",
      messages: [{ role: "user", contents: [{ $type: "text", $version: 5, text: "hi", spans: [1, 2] }] }],
    };
    const session = deserializeSession(envelope({ id: "n", stateBag: { h: old } }));
    expect(session.stateBag.h).toEqual({
      ...old,
      $version: 3,
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
    });
  });

  it("an envelope newer than known is a clear error naming both format versions; bulk migration leaves it alone", async () => {
    const text = JSON.stringify({ format: "statebag.session", formatVersion: 3, session: { id: "f", stateBag: {} } });
    const error = caught<SessionValidationError>(() => deserializeSession(text));
    expect(error.problems[0]).toMatchObject({ code: "envelope", pointer: "/formatVersion" });
    expect(error.message).toContain("format version 3, but this statebag reads format versions up to 1");

    const s = await seededStore(memoryBackend);
    await s.seedRaw("f", text);
    await s.seed({ id: "n", stateBag: { h: newer } });
    const before = await s.dump();
    const report = await migrateStore(s.store);
    expect(report).toMatchObject({ scanned: 2, migrated: 0, unchanged: 1, preserved: 1, failedCount: 1 });
    expect(report.failed[0]).toMatchObject({ id: "f", pointer: "/formatVersion", code: "envelope" });
    expect((await migrateStore(s.store, { strict: true })).failed.map((f) => [f.id, f.code])).toEqual([
      ["f", "envelope"],
      ["n", "newer-version"],
    ]);
    expect(await s.dump()).toEqual(before);
    await s.done();
  });
});

describe("renames", () => {
  /** acme.Preferences v2 was called acme.Settings (v1). */
  function renamed(): TypeRegistry {
    const registry = TypeRegistry.compose(defaultRegistry());
    registry.register({
      $type: "acme.Preferences",
      version: 2,
      schema: Type.Object({ theme: Type.String() }),
      formerNames: ["acme.Settings"],
    });
    registry.addMigration(
      defineMigration({
        type: "acme.Settings",
        from: 1,
        to: { type: "acme.Preferences", version: 2 },
        up: (v: any) => ({ theme: v.colour ?? "light" }),
      }),
    );
    return registry;
  }

  it("a value stored under the old name loads as the new type; the store rewrites it under the new name", async () => {
    const registry = renamed();
    expect(
      deserializeSession(envelope({ id: "r", stateBag: { p: { $type: "acme.Settings", colour: "dark" } } }), {
        registry,
        strict: true,
      }).stateBag.p,
    ).toEqual({
      $type: "acme.Preferences",
      $version: 2,
      theme: "dark",
    });
    const s = await seededStore(memoryBackend);
    await s.seed({ id: "r", stateBag: { p: { $type: "acme.Settings", colour: "dark" } } });
    const report = await migrateStore(s.store, { registry });
    expect(report.states).toEqual([{ type: "acme.Settings", from: 1, toType: "acme.Preferences", to: 2, count: 1 }]);
    expect(JSON.parse((await s.dump()).get("r")!.text).session.stateBag.p).toEqual({
      $type: "acme.Preferences",
      $version: 2,
      theme: "dark",
    });
    await s.done();
  });

  it("the old name stays reserved: registering or composing a type under it is refused", () => {
    const registry = renamed();
    expect(() => registry.register({ $type: "acme.Settings", schema: Type.Object({ x: Type.String() }) })).toThrow(
      RegistryError,
    );
    expect(() => registry.register({ $type: "acme.Settings", schema: Type.Object({ x: Type.String() }) })).toThrow(
      /former name of "acme.Preferences"/,
    );
    const other = new TypeRegistry({ source: "plugin" });
    other.register({ $type: "acme.Settings", schema: Type.Object({}) });
    expect(() => TypeRegistry.compose(renamed(), other)).toThrow(/former name/);
    expect(renamed().renamedTo("acme.Settings")).toBe("acme.Preferences");
  });

  it("the generated registry reserves statebag's own type names and registers their migrations", () => {
    const registry = defaultRegistry();
    const steps = registry.migrations().map((m) => `${m.type} v${m.from} -> ${m.toType} v${m.to}`);
    expect(steps).toEqual([
      "InMemoryChatHistoryState v1 -> InMemoryChatHistoryState v2",
      "InMemoryChatHistoryState v2 -> InMemoryChatHistoryState v3",
      "RollingSummaryState v1 -> RollingSummaryState v2",
      "StoredChatHistoryState v1 -> StoredChatHistoryState v2",
    ]);
    expect(() =>
      TypeRegistry.compose(registry).register({ $type: "InMemoryChatHistoryState", schema: Type.Object({}) }),
    ).toThrow(/already registered/);
  });
});

describe("stores migrate on load", () => {
  it("store.get returns the latest version; the stored text changes only when the session is saved", async () => {
    const registry = profileRegistry();
    const legacyText = envelope({ id: "p", stateBag: { profile: v1Profile } }); // what the previous release wrote
    const codec = defaultSessionCodec({ registry });
    let seeding = true;
    const store = new MemorySessionStore({
      codec: { serialize: (x) => (seeding ? legacyText : codec.serialize(x)), deserialize: codec.deserialize },
    });
    await store.save({ id: "p", stateBag: {} }, { expectedRevision: null });
    seeding = false;
    const loaded = await store.get("p");
    expect(loaded!.session.stateBag.profile).toMatchObject({ $version: 4, tier: "free" });
    expect((await store.scan({ includeText: true })).items[0].text).toBe(legacyText);
    await store.save(loaded!.session, { expectedRevision: loaded!.revision });
    expect(JSON.parse((await store.scan({ includeText: true })).items[0].text!).session.stateBag.profile.$version).toBe(
      4,
    );
  });
});
