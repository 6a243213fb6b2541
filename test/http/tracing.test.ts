/**
 * The chat server on a traced store: each route's store calls nest under a `statebag.chat` span
 * naming the operation (`send`, `turn`, `resume`, `stop`, `list`, `get`, `delete`), the background
 * turn has its own, and no span carries the chat id, the owner or the text (only the session id's
 * hash, as every statebag span).
 */
import { createHash } from "node:crypto";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { expect, it } from "vitest";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { call, harness, post, readReply, userTurn, waitFor } from "./setup.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const hash = (id: string) => createHash("sha256").update(id).digest("hex").slice(0, 16);

function parentOf(span: ReadableSpan): ReadableSpan | undefined {
  const id = span.parentSpanContext?.spanId;
  return id === undefined ? undefined : exporter.getFinishedSpans().find((s) => s.spanContext().spanId === id);
}

it("each chat operation is a span with the store calls it made under it, naming no chat, owner or text", async () => {
  const store = await openStore("memory:", { tracing: { tracerProvider: provider } });
  const { handler } = harness({}, store);
  await readReply(await post(handler, userTurn("SECRET-chat", "SECRET words"), { owner: "SECRET-owner" }));
  await waitFor(async () =>
    exporter.getFinishedSpans().some((s) => s.attributes["statebag.chat.operation"] === "turn") ? true : undefined,
  );
  expect((await call(handler, "GET", "/chats/SECRET-chat", "SECRET-owner")).status).toBe(200);
  expect((await call(handler, "GET", "/chats", "SECRET-owner")).status).toBe(200);
  expect((await call(handler, "DELETE", "/chats/SECRET-chat", "SECRET-owner")).status).toBe(204);

  const chatSpans = exporter.getFinishedSpans().filter((s) => s.name === "statebag.chat");
  expect(chatSpans.map((s) => s.attributes["statebag.chat.operation"])).toEqual([
    "send",
    "turn",
    "get",
    "list",
    "delete",
  ]);
  const byOp = new Map(chatSpans.map((s) => [s.attributes["statebag.chat.operation"], s]));
  // The send's chat id is in its body, not its path: the turn and the routes with an id name it.
  for (const op of ["turn", "get", "delete"])
    expect(byOp.get(op)!.attributes["statebag.session.id_hash"]).toBe(hash("ui-chat/SECRET-chat"));
  // The accept save is the send's; the commit is the turn's; the turn runs under the send.
  const saves = exporter.getFinishedSpans().filter((s) => s.name === "statebag.save");
  expect(saves.map((s) => parentOf(s)?.attributes["statebag.chat.operation"])).toEqual(["send", "turn"]);
  expect(parentOf(byOp.get("turn")!)).toBe(byOp.get("send"));
  const deletes = exporter.getFinishedSpans().filter((s) => s.name === "statebag.delete");
  expect(deletes.map((s) => parentOf(s)?.attributes["statebag.chat.operation"])).toEqual(["delete"]);
  const exported = JSON.stringify(exporter.getFinishedSpans().map((s) => [s.name, s.attributes, s.events]));
  expect(exported).not.toContain("SECRET");
  await store.close();
});
