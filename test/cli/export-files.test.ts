/**
 * Files travel with an export: a stored chat whose images are references (their bytes in the
 * store's blob store) is exported with the bytes inline (data: contents, which Agent Framework
 * reads), read back through the blob store's hash check; `statebag import --save` into another
 * store keeps them, and `statebag migrate --blobs --apply` moves them into that store's blob store
 * again, under the same hashes. A blob gone from the store fails the export instead of dropping
 * the file.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { blobWriter, offloadDataContents, sha256Hex } from "../../src/runtime/blobs/references.js";
import { userMessage } from "../../src/runtime/core/messages.js";
import { createSessionData } from "../../src/runtime/core/session.js";
import { openStore } from "../../src/stores.js";
import { cli, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-export-files-");
afterAll(() => tmp.cleanup());

describe("statebag export with files in the blob store", () => {
  it("writes the bytes inline; import and migrate --blobs bring them back as references", async () => {
    const source = `sqlite:${join(tmp.dir, "source.db")}`;
    const store = await openStore(source);
    const image = randomBytes(20_000);
    const hash = sha256Hex(image);
    const { messages } = await offloadDataContents(
      [
        userMessage([
          { $type: "text", text: "look" },
          { $type: "data", uri: `data:image/png;base64,${image.toString("base64")}`, name: "a.png" },
        ]),
      ],
      blobWriter(store.blobs!, "ada"),
    );
    const session = createSessionData({ id: "with-file" });
    session.stateBag["statebag.chatHistory"] = {
      $type: "InMemoryChatHistoryState",
      $version: 2,
      messages,
      droppedMessageCount: 0,
    } as never;
    await store.save(session, { expectedRevision: null, meta: { owner: "ada" } });
    await store.close();

    const out = join(tmp.dir, "with-file.dotnet.json");
    const exported = await cli(["export", "--to", "dotnet", "--id", "with-file", "--store", source, "-o", out]);
    expect(exported.code, exported.stderr).toBe(0);
    const text = readFileSync(out, "utf8");
    expect(text).toContain(image.toString("base64"));
    expect(text).not.toContain("statebag.blobReference");

    const target = `sqlite:${join(tmp.dir, "target.db")}`;
    const imported = await cli(["import", "--from", "dotnet", out, "--id", "copied", "--save", "--store", target]);
    expect(imported.code, imported.stderr).toBe(0);
    const dry = await cli(["migrate", "--store", target, "--blobs", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, offloaded: { contents: 1, bytes: image.length } });
    const moved = await cli(["migrate", "--store", target, "--blobs", "--apply"]);
    expect(moved.code, moved.stderr).toBe(0);
    const copy = await openStore(target);
    try {
      expect(JSON.stringify((await copy.get("copied"))!.session)).toContain(`"hash":"${hash}"`);
      expect(await copy.blobs!.has(hash)).toBe(true);
    } finally {
      await copy.close();
    }
  });

  it("a file whose blob is gone fails the export, naming the session", async () => {
    const source = `sqlite:${join(tmp.dir, "gone.db")}`;
    const store = await openStore(source);
    const image = randomBytes(9_000);
    const { messages } = await offloadDataContents(
      [userMessage([{ $type: "data", uri: `data:image/png;base64,${image.toString("base64")}` }])],
      blobWriter(store.blobs!, "ada"),
    );
    const session = createSessionData({ id: "gone" });
    session.stateBag["statebag.chatHistory"] = {
      $type: "InMemoryChatHistoryState",
      $version: 2,
      messages,
      droppedMessageCount: 0,
    } as never;
    await store.save(session, { expectedRevision: null, meta: { owner: "ada" } });
    await store.blobs!.delete(sha256Hex(image), { owner: "ada" });
    await store.close();
    const r = await cli(["export", "--to", "dotnet", "--id", "gone", "--store", source]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no longer in the blob store/);
  });
});
