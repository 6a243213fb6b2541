/**
 * attach.sqlite.16x1MiB: save + load of a chat holding 16 images of 1 MiB (quick: 64 KiB) on a
 * SQLite store, with the images kept by reference (statebag.blobReference; the bytes put once in
 * store.blobs) against the same chat with the images inline (data: contents, every save and load
 * re-writes and re-reads them). Each save writes a changed session (one more message in turn), as a
 * real turn does. Besides the times, the case records the bytes of the stored session row on each
 * side (`ours_bytes`, `baseline_bytes`).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { blobWriter, offloadDataContents } from "../../src/runtime/blobs/references.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { openStore, type SessionStore } from "../../src/stores.js";
import { compare, result, type BenchContext, type CaseOutcome } from "../harness.js";

function chat(id: string, images: Buffer[]): AgentSession {
  const agent = new ChatClientAgent({ client: new ScriptedChatClient({ rules: [] }) });
  const session = agent.createSession({ id, kind: "local" });
  const messages: ChatMessage[] = [];
  images.forEach((image, i) => {
    messages.push({
      role: "user",
      contents: [
        { $type: "text", text: `What is in picture ${i + 1}?` },
        { $type: "data", uri: `data:image/png;base64,${image.toString("base64")}`, name: `photo-${i + 1}.png` },
      ],
    });
    messages.push({ role: "assistant", contents: [{ $type: "text", text: `Picture ${i + 1} shows a cat.` }] });
  });
  session.stateBag["statebag.chatHistory"] = {
    $type: "InMemoryChatHistoryState",
    $version: 2,
    messages,
    droppedMessageCount: 0,
  } as never;
  return session;
}

function withOneMore(session: AgentSession, n: number): AgentSession {
  const state = session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] };
  const copy = structuredClone({ ...session, stateBag: { ...session.stateBag } }) as AgentSession;
  (copy.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages = [
    ...state.messages,
    { role: "user", contents: [{ $type: "text", text: `one more (${n})` }] },
  ];
  return copy;
}

export async function attachmentCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-bench-attach-"));
  const stores: SessionStore[] = [];
  try {
    const size = ctx.quick ? 64 * 1024 : 1024 * 1024;
    const images = Array.from({ length: 16 }, () => randomBytes(size));
    const inlineStore = await openStore(`sqlite:${join(dir, "inline.db")}`);
    const refStore = await openStore(`sqlite:${join(dir, "refs.db")}`);
    stores.push(inlineStore, refStore);
    const inline = chat("bench-inline", images);
    const referenced = chat("bench-refs", images);
    const history = referenced.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] };
    history.messages = (await offloadDataContents(history.messages, blobWriter(refStore.blobs!, "ada"))).messages;
    const variants = new Map<SessionStore, AgentSession[]>([
      [inlineStore, [inline, withOneMore(inline, 1)]],
      [refStore, [referenced, withOneMore(referenced, 1)]],
    ]);
    const revisions = new Map<SessionStore, number>();
    const saves = new Map<SessionStore, number>();
    for (const [store, [first]] of variants) {
      revisions.set(store, await store.save(first, { expectedRevision: null, meta: { owner: "ada" } }));
      saves.set(store, 1);
    }
    const saveLoad = (store: SessionStore) => async () => {
      const n = saves.get(store)!;
      saves.set(store, n + 1);
      const session = variants.get(store)![n % 2];
      revisions.set(
        store,
        await store.save(session, { expectedRevision: revisions.get(store)!, meta: { owner: "ada" } }),
      );
      return store.get(session.id);
    };
    const rowBytes = async (store: SessionStore, id: string) => {
      const page = await store.scan({ includeText: true, limit: 10 });
      const item = page.items.find((i) => i.id === id);
      return item?.text === undefined ? 0 : Buffer.byteLength(item.text);
    };
    const label = ctx.quick ? "16x64KiB" : "16x1MiB";
    ctx.log(`attach.sqlite.${label} (a chat of 16 images, by reference vs inline, save + load)`);
    const timing = await compare(saveLoad(refStore), saveLoad(inlineStore), {
      samples: ctx.quick ? 3 : 11,
      warmup: 2,
      minSampleMs: 0,
    });
    const ours = await rowBytes(refStore, referenced.id);
    const baseline = await rowBytes(inlineStore, inline.id);
    ctx.log(`  stored session row: ${ours} bytes by reference, ${baseline} bytes inline`);
    return [
      {
        ...result(`attach.sqlite.${label}`, "the same chat with its images inline (data: contents)", timing),
        ours_bytes: ours,
        baseline_bytes: baseline,
      },
    ];
  } finally {
    for (const store of stores) await store.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
