import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { exportSessionDocument, importSession, InteropError } from "../../src/runtime/interop/index.js";
import {
  DOTNET_FS_STORE_KEY,
  decodeFsSegment,
  encodeFsSegment,
  fsStoreShape,
  listDotnetFsStore,
  readCosmosChatHistory,
  readFsStoreFile,
  withFsStoreOwner,
} from "../../src/runtime/interop/maf-stores.js";

const dir = (name: string) => fileURLToPath(new URL(`../fixtures/maf/${name}`, import.meta.url));
const text = (name: string) => readFileSync(dir(name), "utf8");

describe("FileSystemAgentSessionStore trees", () => {
  it("lists a-{agent}/u-{user}/c-{conversation}.json with the segments decoded", async () => {
    const { entries, skipped } = await listDotnetFsStore(dir("45_dotnet_fs_store"));
    expect(skipped).toEqual([]);
    expect(entries).toEqual([
      { file: "a-Concierge/c-conv%2F2.json", agent: "Concierge", conversation: "conv/2", id: "a-Concierge/c-conv%2F2" },
      {
        file: "a-Concierge/u-alice/c-conv-1.json",
        agent: "Concierge",
        user: "alice",
        conversation: "conv-1",
        id: "a-Concierge/u-alice/c-conv-1",
      },
      { file: "c-local.json", conversation: "local", id: "c-local" },
    ]);
  });
  it("imports each file with its owner recorded, and exports the .NET document unchanged", async () => {
    const root = dir("45_dotnet_fs_store");
    const { entries } = await listDotnetFsStore(root);
    for (const entry of entries) {
      const doc = await readFsStoreFile(root, entry);
      const session = withFsStoreOwner(
        importSession(doc as object, { from: fsStoreShape(doc, entry.file), id: entry.id }),
        entry,
      );
      expect(
        (session.stateBag[DOTNET_FS_STORE_KEY] as unknown as { value: { conversation: string } }).value.conversation,
      ).toBe(entry.conversation);
      expect(exportSessionDocument(session, { to: "dotnet" })).toEqual(doc);
    }
  });
  it("the sanitizer round-trips, all-dot segments included", () => {
    for (const s of ["a/b", "100%", "..", "...", "plain"]) expect(decodeFsSegment(encodeFsSegment(s))).toBe(s);
    expect(encodeFsSegment("..")).toBe("%2E%2E");
  });
});

describe("Cosmos chat-history exports", () => {
  it("reads an array export into one message log per conversation (PascalCase message strings normalised)", async () => {
    const logs = readCosmosChatHistory(text("46_cosmos_chat_history_export.json"));
    expect(logs.map((l) => l.storageId)).toEqual(["conv-1", "contoso/alice/conv-2"]);
    expect(logs[0].messages.map((m) => [m.role, m.contents[0]])).toEqual([
      ["user", { $type: "text", text: "Hello, world!" }],
      ["assistant", { $type: "text", text: "Hi! How can I help?" }],
    ]);
    expect(logs[0].messages[0].additionalProperties?.["statebag.cosmos"]).toMatchObject({
      id: "0b7c6f1e-1",
      ttl: 86400,
      _etag: '"0400"',
    });
    const store = new MemorySessionStore();
    for (const log of logs)
      await store.messages.appendMessages(log.storageId, log.messages, { operationId: `import:${log.storageId}` });
    expect((await store.messages.readMessages("conv-1")).messages).toHaveLength(2);
  });
  it("reads JSON lines in timestamp order", () => {
    const logs = readCosmosChatHistory(text("47_cosmos_chat_history_export.jsonl"));
    expect(logs.find((l) => l.storageId === "conv-1")!.messages.map((m) => m.messageId)).toEqual(["m1", "m2"]);
  });
  it("names the document and member of a bad entry", () => {
    try {
      readCosmosChatHistory('[{"type": "ChatMessage", "conversationId": "c", "message": 5}]');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InteropError);
      expect((error as InteropError).pointer).toBe("/0/message");
    }
    expect(() => readCosmosChatHistory('[{"__proto__": {}}]')).toThrow();
    expect(() => readCosmosChatHistory("[".repeat(5000) + "]".repeat(5000))).toThrow(/deep/);
  });
});
