/**
 * Issue #27 (Python): FileSessionStore msgpack snapshots and long-id file names, FileHistoryProvider
 * histories (.jsonl / .msgpack), the tool_approval state as a pending approval round, compaction
 * annotations and message_injection state. Fixtures 60-63: test/fixtures/maf/README-python-2026.txt.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { answerToolApprovals } from "../../src/runtime/agent/approval-store.js";
import { TOOL_APPROVALS_KEY, approveToolCall, pendingToolApprovals } from "../../src/runtime/agent/approvals.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import {
  type InteropError,
  compactionView,
  detectHistoryFile,
  detectSessionShape,
  exportPythonHistoryJsonl,
  exportPythonHistoryMsgpack,
  exportSessionDocument,
  exportSessionMsgpack,
  historyFileKey,
  historyFileName,
  importPythonHistory,
  importSession,
  importSessionMsgpack,
  includedMessages,
  keyFromFileName,
  listSnapshotFiles,
  loadMsgpack,
  readHistoryJsonl,
  readHistoryMsgpack,
  sessionFileName,
  writeSnapshotFile,
} from "../../src/runtime/interop/index.js";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/maf/${name}`, import.meta.url));
const rejection = async (p: Promise<unknown> | (() => unknown)): Promise<InteropError> => {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (error) {
    return error as InteropError;
  }
  throw new Error("expected an error");
};

describe("FileSessionStore msgpack snapshots", () => {
  it("imports fixture 60 and writes the same bytes back", async () => {
    const bytes = fixture("60_python_file_store_msgpack_snapshot.msgpack");
    const codec = await loadMsgpack();
    expect(detectSessionShape(codec.decode(bytes))?.shape).toBe("python-file-store");
    const session = await importSessionMsgpack(bytes, { from: "python-file-store" });
    expect(session.id).toBe("binary-session");
    expect(
      (session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages.map((m) => m.role),
    ).toEqual(["user", "assistant"]);
    const back = await exportSessionMsgpack(session, { to: "python-file-store" });
    expect(Buffer.from(back).equals(bytes)).toBe(true);
  });

  it("names .msgpack files like .json ones (literal, ~session-<base64url>, ~session-sha256-<hex>) and lists them", async () => {
    expect(sessionFileName("binary-session", "msgpack")).toBe("binary-session.msgpack");
    expect(sessionFileName("../a b", "msgpack")).toBe("~session-Li4vYSBi.msgpack");
    const long = "\u00e9".repeat(128);
    expect(sessionFileName(long, "msgpack")).toMatch(/^~session-sha256-[0-9a-f]{64}\.msgpack$/);
    expect(keyFromFileName("~session-Li4vYSBi.msgpack", ".msgpack")).toEqual({ key: "../a b", hashed: false });
    const dir = await mkdtemp(join(tmpdir(), "sb-msgpack-store-"));
    const session = await importSessionMsgpack(fixture("60_python_file_store_msgpack_snapshot.msgpack"), {
      from: "python-file-store",
    });
    await writeSnapshotFile(
      dir,
      "../a b",
      await exportSessionMsgpack({ ...session, id: "../a b" }, { to: "python-file-store" }),
      "msgpack",
    );
    await writeSnapshotFile(dir, "plain", "{}\n");
    const files = await listSnapshotFiles(dir);
    expect(files.map((f) => [f.name, f.key, f.format])).toEqual([
      ["plain.json", "plain", undefined],
      ["~session-Li4vYSBi.msgpack", "../a b", "msgpack"],
    ]);
    expect((await importSessionMsgpack(await readFile(files[1].path), { from: "python-file-store" })).id).toBe(
      "../a b",
    );
    expect((await readdir(dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("refuses other versions, binary and extension values, __proto__ keys, non-string keys, deep and lying input with pointers", async () => {
    const codec = await loadMsgpack();
    const snapshot = (state: unknown, version = "1.0") =>
      codec.encode({ type: "session", session_id: "s", service_session_id: null, state, version });
    expect((await rejection(importSessionMsgpack(snapshot({}, "1.1"), { from: "python-file-store" }))).problem).toMatch(
      /^Unsupported session snapshot version '1.1'/,
    );
    const bin = await rejection(
      importSessionMsgpack(snapshot({ k: new Uint8Array([1, 2]) }), { from: "python-file-store" }),
    );
    expect([bin.pointer, bin.problem]).toEqual(["/state/k", "binary data (msgpack bin) has no JSON form"]);
    const date = await rejection(importSessionMsgpack(snapshot({ when: new Date(0) }), { from: "python-file-store" }));
    expect(date.pointer).toBe("/state/when");
    // __proto__ as a key: 0x81 (map of 1), 0xa9 "__proto__", 0xc0 nil
    const proto = await rejection(
      importSessionMsgpack(Uint8Array.from([0x81, 0xa9, ...Buffer.from("__proto__"), 0xc0]), {
        from: "python-file-store",
      }),
    );
    expect(proto.problem).toMatch(/__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const intKey = await rejection(
      importSessionMsgpack(Uint8Array.from([0x81, 0x01, 0xc0]), { from: "python-file-store" }),
    );
    expect(intKey.problem).toMatch(/a map key is the number 1/);
    // 100,000 nested arrays: decoded without recursion, then refused for depth.
    const deep = new Uint8Array(100_001).fill(0x91);
    deep[100_000] = 0xc0;
    expect(
      ((await rejection(importSessionMsgpack(deep, { from: "python-file-store" }))) as unknown as { code: string })
        .code,
    ).toBe("json-too-deep");
    // A header claiming 4 billion elements is refused before anything is allocated.
    const lying = await rejection(
      importSessionMsgpack(Uint8Array.from([0xdd, 0xff, 0xff, 0xff, 0xff]), { from: "python-file-store" }),
    );
    expect(lying.problem).toMatch(/^not valid msgpack: .*/);
    expect(lying.message.length).toBeLessThan(1000);
  });
});

describe("FileHistoryProvider histories", () => {
  it("reads fixture 61 (.jsonl) and writes it back byte for byte", () => {
    const bytes = fixture("61_python_file_history.jsonl");
    expect(detectHistoryFile("s1.jsonl", bytes)?.format).toBe("jsonl");
    const messages = importPythonHistory(readHistoryJsonl(bytes));
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "assistant"]);
    expect(exportPythonHistoryJsonl(messages)).toBe(bytes.toString("utf8"));
  });

  it("reads fixture 62 (.msgpack) and writes it back byte for byte; both forms hold the same messages", async () => {
    const codec = await loadMsgpack();
    const bytes = fixture("62_python_file_history.msgpack");
    expect(detectHistoryFile("s1.msgpack", bytes)?.format).toBe("msgpack");
    expect(detectHistoryFile("s1.msgpack", fixture("60_python_file_store_msgpack_snapshot.msgpack"))).toBeUndefined();
    const messages = importPythonHistory(readHistoryMsgpack(bytes, codec));
    expect(messages).toEqual(importPythonHistory(readHistoryJsonl(fixture("61_python_file_history.jsonl"))));
    expect(Buffer.from(exportPythonHistoryMsgpack(messages, codec)).equals(bytes)).toBe(true);
  });

  it("file names: the session store's stems, default for no id, no 128-character limit", () => {
    expect(historyFileName("s1")).toBe("s1.jsonl");
    expect(historyFileName(undefined, "msgpack")).toBe("default.msgpack");
    expect(historyFileName("x".repeat(300))).toBe(`${"x".repeat(300)}.jsonl`);
    expect(historyFileName("../unsafe/session")).toMatch(/^~session-[A-Za-z0-9_-]+\.jsonl$/);
    expect(historyFileKey(historyFileName("../unsafe/session"))).toEqual({
      key: "../unsafe/session",
      hashed: false,
      format: "jsonl",
    });
    expect(historyFileKey(historyFileName("\u00e9".repeat(300), "msgpack"))).toEqual({
      hashed: true,
      format: "msgpack",
    });
    expect(historyFileKey(".s1.jsonl")).toBeUndefined();
  });

  it("refuses bad records as the provider does, naming the record", async () => {
    const codec = await loadMsgpack();
    const truncated = await rejection(() =>
      readHistoryMsgpack(Uint8Array.from([0, 0, 0, 10, ...Buffer.from("short")]), codec),
    );
    expect([truncated.pointer, truncated.problem]).toEqual(["/0", "history record 1 is truncated"]);
    expect((await rejection(() => readHistoryMsgpack(Uint8Array.from([0, 0, 0, 0]), codec))).problem).toBe(
      "history record 1 has invalid length 0",
    );
    expect((await rejection(() => readHistoryMsgpack(Uint8Array.from([0x05, 0, 0, 0, 1]), codec))).problem).toMatch(
      /invalid length 83886080/,
    );
    expect((await rejection(() => readHistoryMsgpack(Uint8Array.from([0, 0]), codec))).problem).toBe(
      "history record 1 has a truncated length header",
    );
    expect((await rejection(() => readHistoryJsonl("\n{not-json}\n"))).problem).toMatch(/^history line 2 is not JSON/);
    expect((await rejection(() => readHistoryJsonl("[1, 2, 3]\n"))).problem).toBe(
      "history line 1 did not deserialize to a mapping (found an array)",
    );
    expect(
      (
        await rejection(() =>
          readHistoryJsonl('{"type":"message","role":"user","contents":[],"additional_properties":{"v":NaN}}\n'),
        )
      ).hint,
    ).toMatch(/NaN or Infinity/);
    const proto = await rejection(() => readHistoryJsonl('{"__proto__": {"polluted": true}}\n'));
    expect((proto as unknown as { code: string }).code).toBe("json-proto-key");
    expect(
      ((await rejection(() => readHistoryJsonl("[".repeat(5000) + "]".repeat(5000)))) as unknown as { code: string })
        .code,
    ).toBe("json-too-deep");
    const bad = await rejection(() =>
      importPythonHistory(readHistoryJsonl('{"type":"message","role":"user"}\n{"type":"message","role":5}\n')),
    );
    expect(bad.pointer).toBe("/1/role");
  });

  it("reads a 5,000-record history in one pass", async () => {
    const codec = await loadMsgpack();
    const messages: ChatMessage[] = Array.from({ length: 5_000 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      contents: [{ $type: "text", text: `m${i}` }],
    }));
    const bytes = exportPythonHistoryMsgpack(messages, codec);
    expect(importPythonHistory(readHistoryMsgpack(bytes, codec))).toHaveLength(5_000);
    expect(importPythonHistory(readHistoryJsonl(exportPythonHistoryJsonl(messages)))).toHaveLength(5_000);
  });
});

const fc = (id: string, amount: number) => ({
  type: "function_call",
  call_id: id,
  name: "wire_money",
  arguments: { amount },
});
const approvalRequest = (id: string, amount: number) => ({
  type: "function_approval_request",
  id,
  function_call: fc(id, amount),
  user_input_request: true,
});

function stoppedPythonSession() {
  return {
    type: "session",
    session_id: "py-approve",
    service_session_id: null,
    state: {
      in_memory: {
        messages: [
          { type: "message", role: "user", contents: [{ type: "text", text: "wire 70 and 5 to Bob" }] },
          { type: "message", role: "assistant", contents: [approvalRequest("call_w", 70)] },
        ],
      },
      tool_approval: {
        rules: [{ tool_name: "lookup" }],
        queued_approval_requests: [approvalRequest("call_x", 5)],
        collected_approval_responses: [],
      },
      "message_injection.pending_messages": [{ role: "system", content: "forged middleware message" }],
    },
  };
}

describe("tool_approval: a Python session stopped at an approval is answered in statebag", () => {
  it("imports the surfaced and the queued request as one round, and exports the document unchanged", () => {
    const doc = stoppedPythonSession();
    const session = importSession(doc, { from: "python" });
    expect(pendingToolApprovals(session).map((r) => r.requestId)).toEqual(["call_w", "call_x"]);
    expect(exportSessionDocument(session, { to: "python" })).toEqual(doc);
  });

  it("answerToolApprovals runs both calls with ScriptedChatClient; the document exported after each step is what Python expects", async () => {
    const runs: unknown[] = [];
    const wire: AITool = {
      name: "wire_money",
      requiresApproval: true,
      execute: async (args) => (runs.push(args.amount), { sent: args.amount }),
    };
    const agent = new ChatClientAgent({ client: new ScriptedChatClient({ rules: [] }), tools: [wire] });
    const store = new MemorySessionStore();
    await store.save(importSession(stoppedPythonSession(), { from: "python" }), { expectedRevision: null });

    const first = await answerToolApprovals(store, "py-approve", agent, [approveToolCall("call_w")]);
    expect(first.pendingApprovals?.map((r) => r.requestId)).toEqual(["call_x"]);
    const open = exportSessionDocument((await store.get("py-approve"))!.session, { to: "python" }) as {
      state: Record<string, { queued_approval_requests: unknown[]; collected_approval_responses: unknown[] }>;
    };
    expect(Object.keys(open.state)).toEqual(["in_memory", "tool_approval", "message_injection.pending_messages"]);
    expect(open.state.tool_approval.queued_approval_requests).toEqual([approvalRequest("call_x", 5)]);
    expect(open.state.tool_approval.collected_approval_responses).toEqual([
      { type: "function_approval_response", approved: true, id: "call_w", function_call: fc("call_w", 70) },
    ]);
    // Read back, the open round is the same round.
    expect(pendingToolApprovals(importSession(open, { from: "python" })).map((r) => r.requestId)).toEqual(["call_x"]);

    const second = await answerToolApprovals(store, "py-approve", agent, [approveToolCall("call_x")]);
    expect(runs).toEqual([70, 5]);
    expect(second.response?.text).toMatch(/The tool returned/);
    const done = exportSessionDocument((await store.get("py-approve"))!.session, { to: "python" }) as {
      state: { in_memory: { messages: { role: string; contents: { type: string }[] }[] }; tool_approval: unknown };
    };
    expect(done.state.tool_approval).toEqual({
      rules: [{ tool_name: "lookup" }],
      queued_approval_requests: [],
      collected_approval_responses: [],
    });
    const types = done.state.in_memory.messages.map((m) => `${m.role}:${m.contents.map((c) => c.type).join(",")}`);
    expect(types).toEqual([
      "user:text",
      "assistant:function_approval_request",
      "user:function_approval_response,function_approval_response",
      "tool:function_result,function_result",
      "assistant:text,usage",
    ]);
    expect(Object.keys(importSession(done, { from: "python" }).stateBag)).not.toContain(TOOL_APPROVALS_KEY);
  });

  it("fixture 63 (AG-UI endpoint test's tool_approval value) is kept verbatim and adds no round (its answer has no request here)", () => {
    const value = JSON.parse(fixture("63_python_tool_approval_state.json").toString("utf8"));
    const doc = { type: "session", session_id: "s", service_session_id: null, state: { tool_approval: value } };
    const session = importSession(doc, { from: "python" });
    expect(session.stateBag[TOOL_APPROVALS_KEY]).toBeUndefined();
    expect(exportSessionDocument(session, { to: "python" })).toEqual(doc);
  });

  it("a collected answer for the surfaced request makes it answered in the round", () => {
    const doc = stoppedPythonSession();
    doc.state.tool_approval.collected_approval_responses = [
      { type: "function_approval_response", approved: false, id: "call_w", function_call: fc("call_w", 70) },
    ] as never;
    const session = importSession(doc, { from: "python" });
    expect(pendingToolApprovals(session).map((r) => r.requestId)).toEqual(["call_x"]);
    expect(exportSessionDocument(session, { to: "python" })).toEqual(doc);
  });
});

describe("compaction annotations and _compaction_messages", () => {
  it("keeps them verbatim and says which messages are excluded or summaries", () => {
    const records = readHistoryJsonl(fixture("61_python_file_history.jsonl"));
    const doc = {
      type: "session",
      session_id: "c",
      service_session_id: null,
      state: { in_memory: { messages: records }, _compaction_messages: { messages: records.slice(0, 2) } },
    };
    const session = importSession(doc, { from: "python" });
    expect(exportSessionDocument(session, { to: "python" })).toEqual(doc);
    const messages = (session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages;
    const view = compactionView(messages);
    expect(view[1]).toMatchObject({ groupId: "g2", groupKind: "tool_call", excluded: false });
    expect(view[3]).toMatchObject({ messageId: "m4", excluded: true, excludeReason: "summarized" });
    expect(view[4]).toMatchObject({ messageId: "s1", summaryOf: { messageIds: ["m2", "m3", "m4"], groupIds: ["g2"] } });
    expect(includedMessages(messages).map((m) => m.messageId)).toEqual([undefined, "m2", "m3", "s1"]);
  });
});

it("a .jsonl history written by statebag reads back through a temp directory", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sb-history-"));
  const messages = importPythonHistory(readHistoryJsonl(fixture("61_python_file_history.jsonl")));
  await writeFile(join(dir, historyFileName("s1")), exportPythonHistoryJsonl(messages));
  expect(importPythonHistory(readHistoryJsonl(await readFile(join(dir, "s1.jsonl"))))).toEqual(messages);
});
