/**
 * Issue #21.5: `statebag inspect` of a store row applies the load rule store.get applies: a row
 * whose session id is not its key does not load, so inspect must not call it valid.
 */
import { afterAll, describe, expect, it } from "vitest";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";
import type { SessionCodec } from "../../src/runtime/stores/types.js";
import { cli, sampleSession, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const honest = defaultSessionCodec();
/** Writes the session under its key but with another id inside (a copied or renamed row). */
const writesAs = (id: string): SessionCodec => ({
  serialize: (s) => honest.serialize({ ...s, id }),
  deserialize: (t) => honest.deserialize(t),
});

describe("statebag inspect: a row whose session id is not its key", () => {
  it("says it does not load, naming the key and the document's id (escaped), exit 1", async () => {
    const path = `${tmp.dir}/mismatch.db`;
    const store = new SqliteSessionStore({ path, codec: writesAs("other\u001b[2J") });
    await store.setup();
    await store.save(sampleSession("the-key"), { expectedRevision: null });
    await store.close();

    const human = await cli(["inspect", "--store", `sqlite:${path}`, "the-key", "--brief"]);
    expect(human.code).toBe(1);
    expect(human.stdout).not.toContain("✔ valid");
    expect(human.stdout).toContain("✖ does not load");
    expect(human.stdout).toContain('stored under the key "the-key"');
    expect(human.stdout).toContain('has the id "other\\u001b[2J"');
    expect(human.stdout + human.stderr).not.toContain("\u001b[2J");

    const json = (await cli(["inspect", "--store", `sqlite:${path}`, "the-key", "--json"])).json();
    expect(json.ok).toBe(false);
    expect(json.validation.ok).toBe(false);
    expect(json.validation.problems).toEqual([expect.objectContaining({ code: "session", pointer: "/session/id" })]);
    // The stored document is still shown as it is.
    expect(json.document.session.id).toBe("other\u001b[2J");
  });

  it("still calls a row valid when its id is its key", async () => {
    const path = `${tmp.dir}/match.db`;
    const store = new SqliteSessionStore({ path });
    await store.setup();
    await store.save(sampleSession("k"), { expectedRevision: null });
    await store.close();
    const r = await cli(["inspect", "--store", `sqlite:${path}`, "k", "--brief"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("✔ valid");
  });
});
