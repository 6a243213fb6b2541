import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { StoredChatHistoryProvider } from "../../src/runtime/agent/providers/stored-chat-history.js";
import { openStore, withSession } from "../../src/stores.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import {
  InteropError,
  SHAPE_NAMES,
  exportSessionDocument,
  importPythonHistory,
  importSession,
  importSessionMsgpack,
  isLiteralSafeKey,
  keyFromFileName,
  loadMsgpack,
  readHistoryJsonl,
  readHistoryMsgpack,
  resolveStoredHistory,
  sessionFileName,
  type SessionShape,
} from "../../src/runtime/interop/index.js";
import { dotnetCompaction, dotnetHarnessState } from "../../src/runtime/interop/dotnet-harness.js";
import {
  fsStoreShape,
  listDotnetFsStore,
  readCosmosChatHistory,
  readFsStoreFile,
  withFsStoreOwner,
} from "../../src/runtime/interop/maf-stores.js";

const history = (messages: unknown[]): AgentSession => ({
  id: "h",
  kind: "local",
  stateBag: {
    "statebag.chatHistory": {
      $type: "InMemoryChatHistoryState",
      $version: 3,
      messages: messages as ChatMessage[],
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
    },
  },
});
const stored = (session: AgentSession) => deserializeSession(serializeSession(session, { validate: true }));
const thrown = (fn: () => unknown): InteropError => {
  try {
    fn();
  } catch (error) {
    return error as InteropError;
  }
  throw new Error("expected an error");
};

describe("tool approvals round-trip in the .NET and Python forms", () => {
  const approvals = history([
    {
      role: "assistant",
      contents: [
        {
          $type: "toolApprovalRequest",
          requestId: "r1",
          toolCall: { $type: "functionCall", callId: "c1", name: "book", arguments: { people: 2 } },
        },
      ],
    },
    {
      role: "user",
      contents: [
        {
          $type: "toolApprovalResponse",
          requestId: "r1",
          approved: true,
          toolCall: { $type: "functionCall", callId: "c1", name: "book", arguments: { people: 2 } },
        },
      ],
    },
    {
      role: "user",
      contents: [
        {
          $type: "toolApprovalResponse",
          requestId: "r2",
          approved: false,
          reason: "too expensive",
          toolCall: { $type: "functionCall", callId: "c2", name: "pay" },
        },
      ],
    },
  ]);
  it.each([
    "dotnet",
    "dotnet-thread",
    "dotnet-provider-state",
    "python",
    "python-memory",
    "python-thread",
    "python-file-store",
    "durable",
  ] as SessionShape[])("%s", (shape) => {
    const doc = exportSessionDocument(approvals, { to: shape });
    const back = stored(importSession(JSON.parse(JSON.stringify(doc)), { from: shape, id: "h" }));
    expect(back.stateBag["statebag.chatHistory"]).toEqual(approvals.stateBag["statebag.chatHistory"]);
    // A durable state keeps its entries' own data beside the history; nothing else is added.
    expect(Object.keys(back.stateBag).filter((k) => k !== "statebag.durable.state")).toEqual(["statebag.chatHistory"]);
  });
  it("the Python form uses Python's approval contents", () => {
    const doc = exportSessionDocument(approvals, { to: "python" }) as {
      state: { in_memory: { messages: { contents: Record<string, unknown>[] }[] } };
    };
    expect(doc.state.in_memory.messages[0].contents[0]).toEqual({
      type: "function_approval_request",
      function_call: { type: "function_call", call_id: "c1", name: "book", arguments: { people: 2 } },
      user_input_request: true,
      id: "r1",
    });
    expect(doc.state.in_memory.messages[1].contents[0]).toMatchObject({
      type: "function_approval_response",
      approved: true,
      id: "r1",
    });
  });
});

describe("readers are hardened like the session loader", () => {
  it.each(SHAPE_NAMES.filter((s) => s !== "dotnet" && s !== "python"))(
    "%s: a __proto__ key, deep input and a huge key give a clear, bounded error",
    (shape) => {
      const proto = thrown(() => importSession('{"__proto__": {"polluted": true}, "stateBag": {}}', { from: shape }));
      expect((proto as unknown as { code: string }).code).toMatch(/json-proto|interop/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const deep = thrown(() => importSession("[".repeat(5000) + "]".repeat(5000), { from: shape }));
      expect((deep as unknown as { code: string }).code).toBe("json-too-deep");
      // A huge hostile key: either a bounded, escaped error, or (shapes that keep unknown members) kept verbatim.
      const hugeKey = "k\u001b[31m".repeat(200_000);
      const doc = {
        stateBag: { [hugeKey]: { $type: 5 } },
        state: { [hugeKey]: { $type: 5 } },
        [hugeKey]: 1,
        conversationId: 5,
        storeState: 5,
        service_thread_id: 5,
        schemaVersion: "x",
        data: 1,
        type: "session",
        session_id: 5,
      };
      let error: InteropError | undefined;
      try {
        const session = importSession(doc, { from: shape, id: "hostile" });
        expect(JSON.stringify(session)).toContain(JSON.stringify(hugeKey).slice(1, -1));
      } catch (e) {
        error = e as InteropError;
      }
      if (error) {
        expect(error.message.length).toBeLessThan(4000);
        expect(error.message).not.toContain("\u001b");
      }
    },
  );

  it("an object document is held to the limits too (huge arrays of bad messages report a bounded list)", () => {
    const messages = Array.from({ length: 5000 }, () => ({
      role: "user",
      contents: [{ $type: "functionCall", name: "f" }],
    }));
    const error = thrown(() => importSession({ storeState: { messages } }, { from: "dotnet-thread" }));
    expect(error.message).toMatch(/\.\.\. and \d+ more/);
    expect(error.message.length).toBeLessThan(20_000);
  });
});

describe("Python FileSessionStore file names", () => {
  it.each([
    ["tenant/user", "~session-dGVuYW50L3VzZXI.json"],
    ["session.id", "session.id.json"],
    ["CON", "~session-Q09O.json"],
    ["x".repeat(128), "x".repeat(128) + ".json"],
  ])("%s -> %s, and back", (key, name) => {
    expect(sessionFileName(key)).toBe(name);
    expect(keyFromFileName(name)).toEqual({ key, hashed: false });
  });
  it("keys too long to encode are hashed; over 128 characters refused; temporary and quarantined files are not sessions", () => {
    const long = "é/".repeat(60);
    expect(sessionFileName(long)).toMatch(/^~session-sha256-[0-9a-f]{64}\.json$/);
    expect(keyFromFileName(sessionFileName(long))).toEqual({ hashed: true });
    expect(() => sessionFileName("x".repeat(129))).toThrow(/at most 128/);
    expect(keyFromFileName(".a.json.0f.tmp")).toBeUndefined();
    expect(keyFromFileName(".a.json.0f.corrupt")).toBeUndefined();
    expect(isLiteralSafeKey("café")).toBe(false);
  });
  it("a snapshot with a registered type's payload it cannot restore is imported as plain data (nothing is lost)", () => {
    const session = importSession(
      '{"type": "session", "version": "1.0", "session_id": "session-1", "service_session_id": null, "state": {"value": {"type": "message", "role": "user", "contents": [123]}}}',
      { from: "python-file-store" },
    );
    expect(session.stateBag.value).toEqual({
      $type: "statebag.ForeignState",
      format: "python",
      value: { type: "message", role: "user", contents: [123] },
    });
  });
});

describe("a session using StoredChatHistoryProvider exports with its history read from the log", () => {
  it("reads the committed messages (and a pending write) from the store's log", async () => {
    const store = await openStore("memory:");
    try {
      const agent = new ChatClientAgent({
        client: new ScriptedChatClient({ usage: false }),
        history: new StoredChatHistoryProvider({ log: store.messages }),
      });
      await withSession(store, "u1", (s) => agent.run("Hi, I am Ada.", s));
      await withSession(store, "u1", (s) => agent.run("Who am I?", s));
      const { session } = (await store.get("u1"))!;
      expect(() => exportSessionDocument(session, { to: "dotnet" })).not.toThrow();
      const resolved = await resolveStoredHistory(session, store.messages);
      const doc = exportSessionDocument(resolved, { to: "dotnet" }) as {
        stateBag: { InMemoryChatHistoryProvider: { messages: ChatMessage[] } };
      };
      expect(doc.stateBag.InMemoryChatHistoryProvider.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
      ]);
      expect(Object.keys(doc.stateBag)).toEqual(["InMemoryChatHistoryProvider"]);
    } finally {
      await store.close();
    }
  });
});

/*
 * Issue #27's readers: the same hardening (deep input, huge input, `__proto__`) and output that
 * grows linearly with the input: sizes, not times (no wall-clock thresholds; speed is `npm run bench`).
 */
describe("issue #27 readers are hardened and linear", () => {
  const fixtureText = (name: string) => readFileSync(new URL(`../fixtures/maf/${name}`, import.meta.url), "utf8");
  const fixtureJson = (name: string) => JSON.parse(fixtureText(name)) as Record<string, any>;
  const deepValue = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  const codeOf = (error: unknown) =>
    (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
  const rejects = async (fn: () => unknown): Promise<unknown> => {
    try {
      await fn();
    } catch (error) {
      return error;
    }
    throw new Error("expected an error");
  };
  /** The reader's output at n and 2n items: the second under 2.5x the first. */
  const linear = async (output: (n: number) => unknown) => {
    const sizes: number[] = [];
    for (const n of [300, 600]) sizes.push(JSON.stringify(await output(n)).length);
    expect(sizes[0]).toBeGreaterThan(0);
    expect(sizes[1]).toBeLessThan(2.5 * sizes[0]);
  };
  /** A document (JSON text) with `slot` replaced by a 5,000-deep array, a `__proto__` key, or padded past a 4 KiB limit. */
  const hostile = async (
    read: (text: string, limits?: { maxBytes: number }) => unknown,
    doc: object,
    slot: (doc: any, value: unknown) => void,
  ) => {
    const shaped = structuredClone(doc);
    slot(shaped, "@@SLOT@@");
    const text = JSON.stringify(shaped);
    expect(codeOf(await rejects(() => read(text.replace('"@@SLOT@@"', deepValue(5000)))))).toBe("json-too-deep");
    expect(codeOf(await rejects(() => read(text.replace('"@@SLOT@@"', '{"__proto__": {"polluted": true}}'))))).toBe(
      "json-proto-key",
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(
      codeOf(
        await rejects(() => read(text.replace('"@@SLOT@@"', JSON.stringify("x".repeat(8192))), { maxBytes: 4096 })),
      ),
    ).toBe("json-too-large");
  };

  describe(".NET approvals, compaction and harness keys (dotnet)", () => {
    const read = (text: string, limits?: { maxBytes: number }) =>
      importSession(text, { from: "dotnet", id: "h", ...(limits ? { limits } : {}) });
    it("_pendingApprovalRequests / toolApprovalState / messagegroups: deep, __proto__ and huge input refused", async () => {
      await hostile(
        read,
        fixtureJson("40_dotnet_session_pending_approval_requests.json"),
        (d, v) => (d.stateBag._pendingApprovalRequests[0].toolCall.arguments = v),
      );
      await hostile(
        read,
        fixtureJson("41_dotnet_session_tool_approval_agent_state.json"),
        (d, v) => (d.stateBag.toolApprovalState.rules[1].arguments = v),
      );
      await hostile(
        read,
        fixtureJson("42_dotnet_session_compaction_and_harness_state.json"),
        (d, v) => (d.stateBag.TodoProvider.items[0].extra = v),
      );
    });
    it("output at 2N pending approvals, queued requests and message groups is under 2.5x that at N", async () => {
      const pending = fixtureJson("40_dotnet_session_pending_approval_requests.json");
      await linear((n) => {
        const d = structuredClone(pending);
        const [user, assistant] = d.stateBag.InMemoryChatHistoryProvider.messages;
        d.stateBag.InMemoryChatHistoryProvider.messages = [user];
        d.stateBag._pendingApprovalRequests = [];
        for (let i = 0; i < n; i++) {
          const m = structuredClone(assistant);
          m.contents[0].requestId = `r${i}`;
          m.contents[0].toolCall.callId = `c${i}`;
          m.messageId = `a${i}`;
          d.stateBag.InMemoryChatHistoryProvider.messages.push(m);
          d.stateBag._pendingApprovalRequests.push({
            requestId: `r${i}`,
            toolCall: structuredClone(m.contents[0].toolCall),
          });
        }
        const session = importSession(d, { from: "dotnet", id: "h" });
        return [session, exportSessionDocument(session, { to: "dotnet" })];
      });
      const state = fixtureJson("41_dotnet_session_tool_approval_agent_state.json");
      await linear((n) => {
        const d = structuredClone(state);
        const q = d.stateBag.toolApprovalState.queuedApprovalRequests[0];
        d.stateBag.toolApprovalState.queuedApprovalRequests = Array.from({ length: n }, (_, i) => ({
          ...structuredClone(q),
          requestId: `q${i}`,
        }));
        return importSession(d, { from: "dotnet", id: "h" });
      });
      const harness = fixtureJson("42_dotnet_session_compaction_and_harness_state.json");
      await linear((n) => {
        const d = structuredClone(harness);
        const groups = d.stateBag.SummarizationCompactionStrategy.messagegroups;
        d.stateBag.SummarizationCompactionStrategy.messagegroups = Array.from({ length: n }, (_, i) =>
          structuredClone(groups[i % groups.length]),
        );
        d.stateBag.TodoProvider.items = Array.from({ length: n }, (_, i) => ({
          id: i,
          title: `t${i}`,
          isComplete: false,
        }));
        const session = importSession(d, { from: "dotnet", id: "h" });
        return [
          dotnetCompaction(session),
          dotnetHarnessState(session),
          exportSessionDocument(session, { to: "dotnet" }),
        ];
      });
    });
  });

  describe("durable 1.2.0 and 2.0 (preview)", () => {
    for (const [name, shape] of [
      ["43_durable_state_1_2_0.json", "durable"],
      ["44_durable_state_2_0_preview_arguments_developer.json", "durable-2-preview"],
    ] as const) {
      const read = (text: string, limits?: { maxBytes: number }) =>
        importSession(text, { from: shape, id: "d", ...(limits ? { limits } : {}) });
      it(`${shape}: deep, __proto__ and huge input refused; output at 2N entries under 2.5x that at N`, async () => {
        const doc = fixtureJson(name);
        await hostile(read, doc, (d, v) => (d.data.conversationHistory[0].messages[0].contents[0].extra = v));
        await linear((n) => {
          const d = structuredClone(doc);
          const entries = d.data.conversationHistory as Record<string, any>[];
          d.data.conversationHistory = Array.from({ length: n }, (_, i) => {
            const e = structuredClone(entries[i % entries.length]);
            e.correlationId = `corr-${Math.floor(i / entries.length)}-${e.correlationId}`;
            for (const [j, m] of (e.messages ?? []).entries())
              if (m.messageId) m.messageId = `${e.correlationId}:${i}:${j}`;
            return e;
          });
          const session = importSession(d, { from: shape, id: "d" });
          return [session, exportSessionDocument(session, { to: shape })];
        });
      });
    }
  });

  describe("ag-ui-snapshot", () => {
    const read = (text: string, limits?: { maxBytes: number }) =>
      importSession(text, { from: "ag-ui-snapshot", id: "t", ...(limits ? { limits } : {}) });
    it("deep, __proto__ and huge input refused; output at 2N messages under 2.5x that at N", async () => {
      const doc = fixtureJson("64_python_ag_ui_thread_snapshot.json");
      await hostile(read, doc, (d, v) => (d.state = { deep: v }));
      await linear((n) => {
        const d = structuredClone(doc);
        const messages = d.messages as Record<string, any>[];
        d.messages = Array.from({ length: n }, (_, i) => ({
          ...structuredClone(messages[i % messages.length]),
          id: `m${i}`,
        }));
        const session = importSession(d, { from: "ag-ui-snapshot", id: "t" });
        return [session, exportSessionDocument(session, { to: "ag-ui-snapshot" })];
      });
    });
  });

  describe("Python msgpack snapshots and FileHistoryProvider histories", () => {
    /** Hand-written msgpack (independent of the codec's encoder): fixarray of one, `depth` times, around nil. */
    const deepMsgpack = (depth: number) => Uint8Array.from([...Array(depth).fill(0x91), 0xc0]);
    /** {"__proto__": {}} */
    const protoMsgpack = Uint8Array.from([0x81, 0xa9, ...Buffer.from("__proto__"), 0x80]);
    const framed = (record: Uint8Array) => {
      const out = new Uint8Array(4 + record.length);
      new DataView(out.buffer).setUint32(0, record.length);
      out.set(record, 4);
      return out;
    };
    it("a msgpack snapshot: deep, __proto__ and huge input refused; output at 2N messages under 2.5x that at N", async () => {
      const codec = await loadMsgpack();
      const read = (bytes: Uint8Array, limits?: { maxBytes: number }) =>
        importSessionMsgpack(bytes, { from: "python-file-store", ...(limits ? { limits } : {}) });
      expect(codeOf(await rejects(() => read(deepMsgpack(5000))))).toBe("json-too-deep");
      expect((await rejects(() => read(protoMsgpack))) as Error).toBeInstanceOf(InteropError);
      expect(((await rejects(() => read(protoMsgpack))) as Error).message).toMatch(/__proto__/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const snapshot = codec.decode(
        readFileSync(new URL("../fixtures/maf/60_python_file_store_msgpack_snapshot.msgpack", import.meta.url)),
      ) as Record<string, any>;
      const huge = codec.encode({ ...snapshot, state: { ...snapshot.state, pad: "x".repeat(8192) } });
      expect(((await rejects(() => read(huge, { maxBytes: 4096 }))) as Error).message).toMatch(
        /over the limit of 4096/,
      );
      await linear(async (n) => {
        const d = structuredClone(snapshot);
        const messages = d.state.in_memory.messages as unknown[];
        d.state.in_memory.messages = Array.from({ length: n }, (_, i) =>
          structuredClone(messages[i % messages.length]),
        );
        const session = await read(codec.encode(d));
        return [session, exportSessionDocument(session, { to: "python-file-store" })];
      });
    });
    it("python-history .jsonl and .msgpack: deep, __proto__ and huge records refused; output at 2N records under 2.5x that at N", async () => {
      const codec = await loadMsgpack();
      const line = fixtureText("61_python_file_history.jsonl").split("\n")[0];
      expect(
        codeOf(
          await rejects(() =>
            readHistoryJsonl(`${line}\n{"type":"message","role":"user","contents":${deepValue(5000)}}\n`),
          ),
        ),
      ).toBe("json-too-deep");
      expect(codeOf(await rejects(() => readHistoryJsonl(`${line}\n{"__proto__":{"polluted":true}}\n`)))).toBe(
        "json-proto-key",
      );
      expect(
        codeOf(
          await rejects(() =>
            readHistoryJsonl(`{"type":"message","role":"user","contents":[],"pad":"${"x".repeat(8192)}"}\n`, {
              maxBytes: 4096,
            }),
          ),
        ),
      ).toBe("json-too-large");
      expect(codeOf(await rejects(() => readHistoryMsgpack(framed(deepMsgpack(5000)), codec)))).toBe("json-too-deep");
      expect(((await rejects(() => readHistoryMsgpack(framed(protoMsgpack), codec))) as Error).message).toMatch(
        /__proto__/,
      );
      // a header claiming more than the file holds is refused before any allocation
      expect(
        ((await rejects(() => readHistoryMsgpack(Uint8Array.from([0x03, 0xff, 0xff, 0xff, 0x80]), codec))) as Error)
          .message,
      ).toMatch(/invalid length|truncated/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const lines = fixtureText("61_python_file_history.jsonl").split("\n").filter(Boolean);
      await linear((n) =>
        importPythonHistory(
          readHistoryJsonl(Array.from({ length: n }, (_, i) => lines[i % lines.length]).join("\n") + "\n"),
        ),
      );
      const records = readHistoryJsonl(fixtureText("61_python_file_history.jsonl"));
      await linear((n) => {
        const parts = Array.from({ length: n }, (_, i) => framed(codec.encode(records[i % records.length])));
        return importPythonHistory(readHistoryMsgpack(Buffer.concat(parts), codec));
      });
    });
  });

  describe("maf-stores: FileSystemAgentSessionStore trees and Cosmos chat-history exports", () => {
    it("Cosmos: deep, __proto__ and huge input refused (outer document and inner message string); output at 2N documents under 2.5x that at N", async () => {
      const docs = fixtureJson("46_cosmos_chat_history_export.json") as unknown as Record<string, any>[];
      const outer = (value: string) => `[{"type":"ChatMessage","conversationId":"c","message":"{}","extra":${value}}]`;
      const inner = (value: string) =>
        JSON.stringify([
          {
            type: "ChatMessage",
            conversationId: "c",
            message: `{"role":"user","contents":[],"additionalProperties":{"x":${value}}}`,
          },
        ]);
      for (const wrap of [outer, inner]) {
        const deep = await rejects(() => readCosmosChatHistory(wrap(deepValue(5000))));
        expect(`${codeOf(deep)} ${(deep as Error).message}`).toMatch(/json-too-deep|deeper than the limit/);
        const proto = await rejects(() => readCosmosChatHistory(wrap('{"__proto__":{"polluted":true}}')));
        expect(`${codeOf(proto)} ${(proto as Error).message}`).toMatch(/json-proto-key|__proto__/);
      }
      expect(
        codeOf(
          await rejects(() =>
            readCosmosChatHistory(JSON.stringify(docs).repeat(1) + " ".repeat(8192), { limits: { maxBytes: 4096 } }),
          ),
        ),
      ).toBe("json-too-large");
      // JSON lines are held to the size limit as a whole, not only line by line
      expect(
        codeOf(
          await rejects(() =>
            readCosmosChatHistory(
              docs
                .map((d) => JSON.stringify(d))
                .join("\n")
                .repeat(4),
              { limits: { maxBytes: 2048 } },
            ),
          ),
        ),
      ).toBe("json-too-large");
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      for (const lines of [false, true]) {
        await linear((n) => {
          const many = Array.from({ length: n }, (_, i) => ({
            ...docs[i % docs.length],
            id: `d${i}`,
            conversationId: `conv-${i % 7}`,
            timestamp: n - i,
          }));
          return readCosmosChatHistory(lines ? many.map((d) => JSON.stringify(d)).join("\n") : JSON.stringify(many));
        });
      }
    });

    it("FileSystemAgentSessionStore: a deep directory is not descended, a deep, __proto__-laden or huge file is refused; listing and import at 2N files under 2.5x N", async () => {
      const root = await mkdtemp(join(tmpdir(), "statebag-fs-store-"));
      try {
        // the layout is at most a-/u-/c-: a directory nested deeper is listed as skipped, not walked
        let dir = join(root, "a-x", "u-y");
        for (let i = 0; i < 40; i++) dir = join(dir, `u-${i}`);
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, "c-deep.json"), "{}");
        const session = fixtureText("45_dotnet_fs_store/c-local.json");
        await writeFile(join(root, "c-deep.json"), `{"stateBag":{"x":${deepValue(5000)}}}`);
        await writeFile(join(root, "c-proto.json"), '{"stateBag":{"__proto__":{"polluted":true}}}');
        await writeFile(join(root, "c-huge.json"), JSON.stringify({ stateBag: { pad: "x".repeat(8192) } }));
        const listed = await listDotnetFsStore(root);
        expect(listed.skipped).toEqual([
          { file: "a-x/u-y/u-0", reason: "not an a-{agent} or u-{user} directory of the store layout" },
        ]);
        const read = (id: string, maxBytes?: number) =>
          readFsStoreFile(root, listed.entries.find((e) => e.id === id)!, maxBytes ? { limits: { maxBytes } } : {});
        expect(codeOf(await rejects(() => read("c-deep")))).toBe("json-too-deep");
        expect(codeOf(await rejects(() => read("c-proto")))).toBe("json-proto-key");
        expect(codeOf(await rejects(() => read("c-huge", 4096)))).toBe("json-too-large");
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        for (const n of [300, 600]) {
          await mkdir(join(root, `t${n}`, "a-agent", "u-user"), { recursive: true });
          for (let i = 0; i < n; i++)
            await writeFile(join(root, `t${n}`, i % 2 ? join("a-agent", "u-user") : "", `c-conv%2F${i}.json`), session);
        }
        await linear(async (n) => {
          const tree = join(root, `t${n}`);
          const { entries } = await listDotnetFsStore(tree);
          expect(entries).toHaveLength(n);
          const sessions: AgentSession[] = [];
          for (const entry of entries) {
            const doc = await readFsStoreFile(tree, entry);
            sessions.push(
              withFsStoreOwner(
                importSession(doc as object, { from: fsStoreShape(doc, entry.file), id: entry.id }),
                entry,
              ),
            );
          }
          return [entries, sessions];
        });
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    });
  });
});
