/**
 * `migrateStore({ offloadBlobs })` (statebag migrate --blobs): sessions written with inline data:
 * files move them into the store's blob store under the session's owner and keep references. A dry
 * run counts and writes nothing; a re-run finds nothing left (resumable, idempotent).
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { sha256Hex } from "../../src/runtime/blobs/references.js";
import { userMessage } from "../../src/runtime/core/messages.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { migrateStore } from "../../src/runtime/stores/migrate.js";

describe("migrating inline files to references", () => {
  it("dry run counts, a run moves them under the owner, a re-run has nothing left", async () => {
    const store = new MemorySessionStore();
    const agent = new ChatClientAgent({ client: new ScriptedChatClient({ rules: [] }) });
    const big = randomBytes(50_000);
    const small = randomBytes(100);
    const session = agent.createSession({ id: "s-1" });
    await agent.run(
      userMessage([
        { $type: "text", text: "look" },
        { $type: "data", uri: `data:image/png;base64,${big.toString("base64")}`, name: "big.png" },
        { $type: "data", uri: `data:image/png;base64,${small.toString("base64")}` },
      ]),
      session,
    );
    await store.save(session, { expectedRevision: null, meta: { owner: "ada" } });

    const dry = await migrateStore(store, { dryRun: true, offloadBlobs: {} });
    expect(dry.offloaded).toEqual({ contents: 1, bytes: big.length });
    expect(dry.migrated).toBe(1);
    expect((await store.blobs!.usage({ owner: "ada" })).blobs).toBe(0);
    expect((await store.get("s-1"))!.revision).toBe(1);

    const run = await migrateStore(store, { offloadBlobs: {} });
    expect(run.offloaded).toEqual({ contents: 1, bytes: big.length });
    const stored = await store.get("s-1");
    const text = JSON.stringify(stored!.session);
    expect(text).toContain(`"hash":"${sha256Hex(big)}"`);
    expect(text).not.toContain(big.toString("base64").slice(0, 40));
    expect(text).toContain(small.toString("base64")); // under the threshold: stays inline
    expect(stored!.meta.owner).toBe("ada");
    expect(await store.blobs!.has(sha256Hex(big), { owner: "ada" })).toBe(true);

    const again = await migrateStore(store, { offloadBlobs: {} });
    expect(again.offloaded).toEqual({ contents: 0, bytes: 0 });
    expect(again.unchanged).toBe(1);
  });
});
