/**
 * statebag/http against what AI SDK UI really sends: the request bodies in
 * test/fixtures/ai-sdk-ui-requests/ were recorded from `@ai-sdk/react`'s `Chat` and `ai`'s
 * `DefaultChatTransport`, and every streamed reply is read back with `ai`'s own parser and
 * `readUIMessageStream`, as `useChat` reads it.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ChatHandler } from "../../src/runtime/http/handler.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { plaintextOwnerError } from "../../src/runtime/stores/listing.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import type { ListOptions, SaveOptions } from "../../src/runtime/stores/types.js";
import { BASE, call, fixture, Gate, harness, post, readReply, userTurn, waitFor } from "./setup.js";

/** Checks a problem response: status, RFC 9457 body with exactly its four fields, no stack, none of `secrets` echoed. */
async function expectProblem(response: Response, status: number, slug: string, secrets: string[] = []) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const text = await response.text();
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["detail", "status", "title", "type"]);
  expect(body).toMatchObject({ type: `urn:statebag:problem:${slug}`, status });
  expect(text).not.toMatch(/\bat \S+ \(|\.ts:\d+|\.js:\d+|Error:/);
  for (const secret of secrets) expect(text).not.toContain(secret);
  return body;
}

type AnyPart = UIMessage["parts"][number] & Record<string, unknown>;
const partsOf = (message: UIMessage) => message.parts as AnyPart[];

async function getChat(handler: ChatHandler, id: string, owner = "ada"): Promise<UIMessage[]> {
  const response = await call(handler, "GET", `/chats/${id}`, owner);
  expect(response.status).toBe(200);
  return (await response.json()) as UIMessage[];
}

afterEach(() => {
  vi.useRealTimers();
});

describe("POST /chat with recorded useChat requests", () => {
  it("a text turn streams one assistant message, part by part, and GET /chats/:id gives the same chat back", async () => {
    const { handler } = harness();
    const body = fixture("text-turn.json");
    const response = await post(handler, body);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const { message, chunks, errors } = await readReply(response);
    expect(errors).toEqual([]);
    expect(chunks[0].type).toBe("start");
    expect(chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });
    expect(message.role).toBe("assistant");
    const parts = partsOf(message);
    expect(parts.map((p) => p.type)).toEqual(["step-start", "text"]);
    expect(parts[1]).toMatchObject({ type: "text", state: "done" });
    const answer = parts[1].text as string;
    expect(answer.length).toBeGreaterThan(0);

    const stored = await getChat(handler, "chat-text-0001");
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant"]);
    // The client's message id is kept, so the stored message is the one on screen.
    expect(stored[0]).toEqual({ id: "msg-0001", role: "user", parts: [{ type: "text", text: "Hi, my name is Ada." }] });
    expect(
      partsOf(stored[1])
        .filter((p) => p.type === "text")
        .map((p) => p.text),
    ).toEqual([answer]);
  });

  it("the example app's single-message body is read the same way", async () => {
    const { handler } = harness();
    const { message } = await readReply(await post(handler, fixture("single-message-turn.json")));
    expect(partsOf(message).some((p) => p.type === "text")).toBe(true);
    const stored = await getChat(handler, "chat-single-01");
    expect(stored[0]).toEqual({
      id: "msg-0008",
      role: "user",
      parts: [{ type: "text", text: "Hello from the example app." }],
    });
  });

  it("a tool turn (get_weather): input, output, then the answer in a second step; the tool ran once", async () => {
    const { handler, toolRuns } = harness();
    const { message, errors } = await readReply(await post(handler, fixture("tool-turn.json")));
    expect(errors).toEqual([]);
    const parts = partsOf(message);
    expect(parts.map((p) => p.type)).toEqual(["step-start", "tool-get_weather", "step-start", "text"]);
    expect(parts[1]).toMatchObject({
      state: "output-available",
      input: { city: "Lisbon" },
      output: { city: "Lisbon", celsius: 19, conditions: "sunny" },
    });
    expect(toolRuns.get_weather).toBe(1);

    const stored = await getChat(handler, "chat-weather-01");
    const tool = stored.flatMap(partsOf).find((p) => p.type === "tool-get_weather")!;
    expect(tool).toMatchObject({
      toolCallId: parts[1].toolCallId,
      state: "output-available",
      input: { city: "Lisbon" },
      output: { city: "Lisbon", celsius: 19 },
    });
  });

  it("an approval request, then the recorded approval response: the tool runs exactly once, and a second answer is refused", async () => {
    const { handler, toolRuns } = harness();
    const first = await readReply(await post(handler, fixture("approval-request-turn.json")));
    expect(first.chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "tool-calls" });
    const asked = partsOf(first.message).find((p) => p.type === "tool-send_email")!;
    expect(asked).toMatchObject({ state: "approval-requested", input: { to: "ada@example.com" } });
    const approvalId = (asked.approval as { id: string }).id;
    expect(toolRuns.send_email).toBe(0);

    // While it waits, a new message is refused (answer the approval first).
    await expectProblem(await post(handler, userTurn("chat-email-0001", "never mind")), 409, "tool-approval-pending", [
      "never mind",
    ]);

    // The recorded answer, with this run's approval and call ids in place of the recorded ones.
    const recorded = fixture("approval-response.json");
    const recordedPart = (recorded.messages as UIMessage[])
      .at(-1)!
      .parts.find((p) => p.type === "tool-send_email") as AnyPart;
    expect(recordedPart).toMatchObject({ state: "approval-responded", approval: { approved: true } });
    const answerBody = JSON.parse(
      JSON.stringify(recorded)
        .replaceAll((recordedPart.approval as { id: string }).id, approvalId)
        .replaceAll(recordedPart.toolCallId as string, asked.toolCallId as string),
    ) as Record<string, unknown>;
    const answered = (answerBody.messages as UIMessage[]).at(-1)!;

    const second = await post(handler, answerBody);
    expect(second.status).toBe(200);
    const { message, errors } = await readReply(second, answered);
    expect(errors).toEqual([]);
    expect(toolRuns.send_email).toBe(1);
    const done = partsOf(message).find((p) => p.type === "tool-send_email")!;
    expect(done).toMatchObject({ state: "output-available", output: { sent: true, to: "ada@example.com" } });
    expect(partsOf(message).some((p) => p.type === "text")).toBe(true);

    // The same answer again (a retry, a second tab): 409, and the tool does not run again.
    await expectProblem(await post(handler, answerBody), 409, "tool-approval-not-pending");
    expect(toolRuns.send_email).toBe(1);

    const stored = await getChat(handler, "chat-email-0001");
    const tool = stored.flatMap(partsOf).filter((p) => p.type === "tool-send_email");
    expect(tool).toHaveLength(1);
    expect(tool[0]).toMatchObject({
      state: "output-available",
      approval: { id: approvalId, approved: true },
      output: { sent: true },
    });
  });

  it("a denied approval: the tool does not run, the part ends output-denied", async () => {
    const { handler, toolRuns } = harness();
    const first = await readReply(await post(handler, fixture("approval-request-turn.json")));
    const asked = partsOf(first.message).find((p) => p.type === "tool-send_email")!;
    const answered = {
      ...first.message,
      parts: first.message.parts.map((p) =>
        p === (asked as unknown)
          ? {
              ...asked,
              state: "approval-responded",
              approval: { id: (asked.approval as { id: string }).id, approved: false, reason: "not now" },
            }
          : p,
      ),
    } as UIMessage;
    const { message } = await readReply(
      await post(handler, { id: "chat-email-0001", messages: [answered], trigger: "submit-message" }),
      answered,
    );
    expect(toolRuns.send_email).toBe(0);
    expect(partsOf(message).find((p) => p.type === "tool-send_email")).toMatchObject({ state: "output-denied" });
    const stored = (await getChat(handler, "chat-email-0001"))
      .flatMap(partsOf)
      .find((p) => p.type === "tool-send_email");
    expect(stored).toMatchObject({ state: "output-denied", approval: { approved: false, reason: "not now" } });
  });
});

describe("message ids", () => {
  it("a continuation whose model reuses a stored message id gets a server id: the ids of a chat stay unique", async () => {
    const { handler, client, store } = harness();
    const first = await readReply(await post(handler, fixture("approval-request-turn.json")));
    const userId = (await getChat(handler, "chat-email-0001"))[0].id;
    const asked = partsOf(first.message).find((p) => p.type === "tool-send_email")!;
    const answered = {
      ...first.message,
      parts: first.message.parts.map((p) =>
        p === (asked as unknown)
          ? {
              ...asked,
              state: "approval-responded",
              approval: { id: (asked.approval as { id: string }).id, approved: true },
            }
          : p,
      ),
    } as UIMessage;
    const original = client.getResponse.bind(client);
    client.getResponse = async (messages, options) => {
      const response = await original(messages, options);
      for (const message of response.messages) message.messageId = userId;
      return response;
    };
    await readReply(
      await post(handler, { id: "chat-email-0001", messages: [answered], trigger: "submit-message" }),
      answered,
    );
    const stored = (await store.get("ui-chat/chat-email-0001"))!.session;
    const history = (stored.stateBag["statebag.chatHistory"] as unknown as { messages: { messageId?: string }[] })
      .messages;
    const ids = history.flatMap((m) => (m.messageId === undefined ? [] : [m.messageId]));
    expect(ids.filter((id) => id === userId)).toHaveLength(1);
    expect(new Set(ids).size).toBe(ids.length);
    const shown = (await getChat(handler, "chat-email-0001")).map((m) => m.id);
    expect(new Set(shown).size).toBe(shown.length);
  });
});

describe("stop during an approval's continuation", () => {
  it("the tool's result stays, the chat is free, and the next message continues after it", async () => {
    const { handler, client, toolRuns } = harness({ leaseMs: 600 });
    const first = await readReply(await post(handler, fixture("approval-request-turn.json")));
    const asked = partsOf(first.message).find((p) => p.type === "tool-send_email")!;
    const approvalId = (asked.approval as { id: string }).id;
    const answered = {
      ...first.message,
      parts: first.message.parts.map((p) =>
        p === (asked as unknown)
          ? { ...asked, state: "approval-responded", approval: { id: approvalId, approved: true } }
          : p,
      ),
    } as UIMessage;
    const gate = (client.responseGate = new Gate());
    const reading = readReply(
      await post(handler, { id: "chat-email-0001", messages: [answered], trigger: "submit-message" }),
      answered,
    );
    await gate.reachedPromise;
    const stopped = await handler(
      new Request(`${BASE}/chat/chat-email-0001/stop`, {
        method: "POST",
        headers: { "x-owner": "ada", "content-type": "application/json" },
      }),
    );
    expect(stopped.status).toBe(200);
    const body = (await stopped.json()) as { stopped: boolean; committed: boolean; kept: UIMessage | null };
    expect(body).toMatchObject({ stopped: true, committed: true });
    await reading;
    client.responseGate = undefined;
    expect(toolRuns.send_email).toBe(1);
    const reloaded = await getChat(handler, "chat-email-0001");
    const shown = reloaded.flatMap(partsOf).find((p) => p.type === "tool-send_email");
    expect(shown).toMatchObject({ state: "output-available", output: { sent: true } });
    // `kept` is what the turn kept, as a reload shows it: the message that asked, with the result.
    expect(body.kept).toEqual(reloaded.find((m) => partsOf(m).some((p) => p.type === "tool-send_email")));
    const next = await post(handler, userTurn("chat-email-0001", "did it go out?", "m-after-stop"));
    expect(next.status).toBe(200);
    const { errors: streamErrors, message, chunks } = await readReply(next);
    expect(streamErrors).toEqual([]);
    expect(message.parts.map((p) => p.type)).toEqual(["step-start", "text"]);
    const chat = await getChat(handler, "chat-email-0001");
    expect(chat.at(-2)!.id).toBe("m-after-stop");
    // The streamed answer is the stored one.
    expect(chat.at(-1)!.id).toBe((chunks[0] as { messageId: string }).messageId);
    expect(chat.flatMap(partsOf).filter((p) => p.type === "tool-send_email")).toEqual([
      expect.objectContaining({ state: "output-available", output: { sent: true, to: "ada@example.com" } }),
    ]);
    expect(toolRuns.send_email).toBe(1);
  });
});

describe("a store that is not ready", () => {
  it("an encrypted store refusing a listing (owner rows still in plaintext) is a 503 with a fixed detail, never the store's message", async () => {
    // What an encrypted store with protected owners throws while the owner still has rows written
    // before (statebag migrate --reencrypt not run yet).
    class NotMigrated extends MemorySessionStore {
      override list(options: ListOptions): ReturnType<MemorySessionStore["list"]> {
        if (options.owner !== undefined) return Promise.reject(plaintextOwnerError("postgres://db.internal/chats"));
        return super.list(options);
      }
    }
    const { handler, errors } = harness({}, new NotMigrated());
    await readReply(await post(handler, userTurn("nm-1", "Hello")));
    const body = await expectProblem(await call(handler, "GET", "/chats"), 503, "store-not-ready", [
      "postgres://",
      "db.internal",
      "reencrypt",
      "plaintext",
    ]);
    expect(body.detail).toMatch(/not ready.*operator/);
    // The app's onError gets the store's own error, hint included.
    expect(errors).toEqual([expect.objectContaining({ code: "store-not-set-up" })]);
    // The chat itself is still there.
    expect((await getChat(handler, "nm-1")).map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});

describe("owners", () => {
  it("another owner's GET, DELETE, stream, stop, approval POST and message POST on an id are 404, and ada's chat is untouched", async () => {
    const { handler, store } = harness();
    await readReply(await post(handler, fixture("approval-request-turn.json"), { owner: "ada" }));
    const adaChat = "ui-chat/chat-email-0001";
    const before = (await store.get(adaChat))!;
    expect(before.meta).toMatchObject({ owner: "ada", labels: { "statebag.type": "chat" } });

    await expectProblem(await call(handler, "GET", "/chats/chat-email-0001", "bob"), 404, "chat-not-found");
    await expectProblem(await call(handler, "DELETE", "/chats/chat-email-0001", "bob"), 404, "chat-not-found");
    await expectProblem(
      await handler(new Request(`${BASE}/chat/chat-email-0001/stream`, { headers: { "x-owner": "bob" } })),
      404,
      "chat-not-found",
    );
    await expectProblem(
      await handler(
        new Request(`${BASE}/chat/chat-email-0001/stop`, {
          method: "POST",
          headers: { "x-owner": "bob", "content-type": "application/json" },
        }),
      ),
      404,
      "chat-not-found",
    );
    const answer = {
      id: "chat-email-0001",
      messages: [
        {
          id: "a1",
          role: "assistant",
          parts: [
            {
              type: "tool-send_email",
              toolCallId: "c1",
              state: "approval-responded",
              input: {},
              approval: { id: "approval_x", approved: true },
            },
          ],
        },
      ],
      trigger: "submit-message",
    };
    await expectProblem(await post(handler, answer, { owner: "bob" }), 404, "chat-not-found");
    // A message from bob with ada's chat id neither creates nor overwrites anything.
    await expectProblem(
      await post(handler, userTurn("chat-email-0001", "hello"), { owner: "bob" }),
      404,
      "chat-not-found",
    );
    const list = (await (await call(handler, "GET", "/chats", "bob")).json()) as { chats: unknown[] };
    expect(list.chats).toEqual([]);
    const after = (await store.get(adaChat))!;
    expect(after.revision).toBe(before.revision);
    expect(after.meta.owner).toBe("ada");
    expect(
      (await getChat(handler, "chat-email-0001", "ada")).flatMap(partsOf).some((p) => p.type === "tool-send_email"),
    ).toBe(true);
  });

  it("a chat id another owner creates at the same moment is a 404 for the loser, never a 409 that says it exists", async () => {
    const base = new MemorySessionStore();
    let raced = false;
    const racing = new Proxy(base, {
      get(target, key, receiver) {
        if (key === "save")
          return async (session: AgentSession, options: SaveOptions) => {
            if (!raced && session.id === "ui-chat/race-1") {
              raced = true;
              await target.save({ id: session.id, stateBag: {} }, { expectedRevision: null, meta: { owner: "bob" } });
            }
            return target.save(session, options);
          };
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const { handler } = harness({}, racing);
    await expectProblem(await post(handler, userTurn("race-1", "hello")), 404, "chat-not-found");
    expect((await base.get("ui-chat/race-1"))!.meta.owner).toBe("bob");
  });

  it("no owner is 401; an owner function that throws is 401 too", async () => {
    const { handler } = harness();
    await expectProblem(await post(handler, fixture("text-turn.json"), { owner: "" }), 401, "unauthenticated");
    const throwing = harness({
      owner: () => {
        throw new Error("token secret-abc expired");
      },
    });
    await expectProblem(await call(throwing.handler, "GET", "/chats"), 401, "unauthenticated", ["secret-abc"]);
    // An owner no store could record (a NUL, a lone surrogate) is not an identity: 401, not a 500.
    for (const bad of ["ada\u0000x", "ada\ud800"]) {
      const odd = harness({ owner: () => bad });
      await expectProblem(await post(odd.handler, userTurn("chat-odd", "hi")), 401, "unauthenticated");
      await expectProblem(await call(odd.handler, "GET", "/chats"), 401, "unauthenticated");
    }
  });
});

describe("limits", () => {
  it("a body over maxBodyBytes is a 413 before it is parsed: an endless body is not read to its end", async () => {
    const { handler, gets } = harness({ maxBodyBytes: 64 * 1024 });
    let pulls = 0;
    const chunk = new TextEncoder().encode(`{"id":"x","pad":"${"a".repeat(16 * 1024)}`);
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(chunk);
      },
    });
    const response = await handler(
      new Request("http://app.test/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json", "x-owner": "ada" },
        body: endless,
        duplex: "half",
      } as RequestInit),
    );
    await expectProblem(response, 413, "body-too-large", ["aaaa"]);
    expect(pulls).toBeLessThan(10);
    // A declared Content-Length over the limit: refused without reading the body.
    let read = 0;
    const declared = new ReadableStream<Uint8Array>({ pull: (c) => (read++, c.enqueue(chunk)) });
    const refused = await handler(
      new Request("http://app.test/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(10 * 1024 * 1024), "x-owner": "ada" },
        body: declared,
        duplex: "half",
      } as RequestInit),
    );
    await expectProblem(refused, 413, "body-too-large");
    expect(read).toBeLessThanOrEqual(1); // the stream's own first pull on construction, at most
    expect(gets).toEqual([]);
  });

  it("bad JSON, a non-JSON content type and a proto key are 400/415 problems that echo nothing", async () => {
    const { handler, gets } = harness();
    await expectProblem(
      await post(handler, undefined, { raw: '{"id":"chat-1","messages":[{"secret-xyz' }),
      400,
      "invalid-json",
      ["secret-xyz"],
    );
    await expectProblem(
      await post(handler, undefined, { raw: '{"id":"chat-1","__proto__":{"polluted":"secret-xyz"}}' }),
      400,
      "invalid-json",
      ["secret-xyz"],
    );
    await expectProblem(
      await post(handler, undefined, { raw: "{}", headers: { "content-type": "text/plain" } }),
      415,
      "unsupported-media-type",
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(gets).toEqual([]);
  });

  it("a message over maxMessageChars is 413, and nothing is stored", async () => {
    const { handler, gets } = harness({ maxMessageChars: 100 });
    const long = `secret-${"x".repeat(100)}`;
    await expectProblem(await post(handler, userTurn("chat-long", long)), 413, "message-too-long", [long.slice(0, 20)]);
    expect(gets).toEqual([]);
    await expectProblem(await call(handler, "GET", "/chats/chat-long"), 404, "chat-not-found");
  });

  it("a bad chat id (in the body or the path), a malformed part and a file not in base64 are 400/422 problems", async () => {
    const { handler } = harness();
    await expectProblem(
      await post(handler, { ...fixture("text-turn.json"), id: "../ada/secret-id" }),
      400,
      "invalid-request",
      ["secret-id"],
    );
    await expectProblem(
      await post(handler, { ...fixture("text-turn.json"), id: "x".repeat(129) }),
      400,
      "invalid-request",
    );
    await expectProblem(await call(handler, "GET", "/chats/bad%20id%20secret-q"), 400, "invalid-request", ["secret-q"]);
    await expectProblem(await call(handler, "DELETE", "/chats/%E0%A4%A"), 404, "chat-not-found");
    const malformed = {
      id: "chat-1",
      messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: 42 }] }],
      trigger: "submit-message",
    };
    await expectProblem(await post(handler, malformed), 400, "invalid-request");
    const file = {
      id: "chat-1",
      messages: [
        {
          id: "m1",
          role: "user",
          parts: [{ type: "file", mediaType: "text/plain", url: "data:text/plain,secret-file" }],
        },
      ],
      trigger: "submit-message",
    };
    await expectProblem(await post(handler, file), 400, "invalid-request", ["secret-file"]);
    await expectProblem(
      await post(handler, { ...fixture("text-turn.json"), trigger: "regenerate-message" }),
      404,
      "chat-not-found",
    );
    await expectProblem(await call(handler, "GET", "/chats?limit=0"), 400, "invalid-request");
    await expectProblem(await call(handler, "GET", "/chats?cursor=secret-cursor"), 400, "invalid-cursor", [
      "secret-cursor",
    ]);
    await expectProblem(await call(handler, "DELETE", "/chats"), 405, "method-not-allowed");
    await expectProblem(await call(handler, "GET", "/elsewhere"), 404, "not-found");
  });
});

describe("concurrency and disconnects", () => {
  it("a second send to a chat while a reply streams is 409 chat-busy; the first turn then completes and commits", async () => {
    const { handler, client } = harness();
    const gate = (client.gate = new Gate());
    const first = await post(handler, userTurn("chat-busy", "Tell me a story"));
    const reading = readReply(first);
    await gate.reachedPromise;
    await expectProblem(await post(handler, userTurn("chat-busy", "hurry up", "m-2")), 409, "chat-busy", ["hurry up"]);
    // Another chat of the same owner is not blocked.
    client.gate = undefined;
    expect((await readReply(await post(handler, userTurn("chat-other", "hi")))).message.role).toBe("assistant");
    gate.open();
    const { message } = await reading;
    expect(partsOf(message).find((p) => p.type === "text")!.text).toContain("never saved");
    const stored = await getChat(handler, "chat-busy");
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant"]);
    // Free again.
    expect((await post(handler, userTurn("chat-busy", "thanks", "m-3"))).status).toBe(200);
  });

  for (const how of ["the request signal aborts", "the response body is cancelled"] as const) {
    it(`a client that leaves mid-stream (${how}): the turn runs to its end and is committed`, async () => {
      const { handler, client, errors } = harness();
      const gate = (client.gate = new Gate());
      const abort = new AbortController();
      const response = await post(handler, userTurn("chat-leave", "Tell me a story", "m-story"), {
        signal: abort.signal,
      });
      const reader = response.body!.getReader();
      await gate.reachedPromise;
      if (how === "the request signal aborts") abort.abort();
      else await reader.cancel();
      // The user's message was committed when the turn was accepted.
      expect((await getChat(handler, "chat-leave")).map((m) => m.id)).toEqual(["m-story"]);
      gate.open();
      const texts = await waitFor(async () => {
        const chat = await getChat(handler, "chat-leave");
        return chat.length === 2 ? chat : undefined;
      });
      expect(partsOf(texts[1]).find((p) => p.type === "text")!.text).toContain("never saved");
      expect(errors).toEqual([]);
    });

    it(`with disconnect: "abort", a client that leaves mid-stream (${how}) ends the turn and nothing of it is kept`, async () => {
      const { handler, client, store, errors } = harness({ disconnect: "abort" });
      await readReply(await post(handler, userTurn("chat-leave", "Hi, my name is Ada.")));
      const before = (await store.get("ui-chat/chat-leave"))!;
      client.gate = new Gate();
      const abort = new AbortController();
      const response = await post(handler, userTurn("chat-leave", "Tell me a story", "m-story"), {
        signal: abort.signal,
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let seen = "";
      while (!seen.includes("upon")) seen += decoder.decode((await reader.read()).value);
      if (how === "the request signal aborts") {
        abort.abort();
        while (!(await reader.read()).done);
      } else {
        await reader.cancel();
      }
      // The turn ends on its own (no clock): the chat is back to its history before the story (saved
      // again as it was: its revision moves on, which frees it).
      await waitFor(async () => {
        const stored = (await store.get("ui-chat/chat-leave"))!;
        return stored.revision !== before.revision ? stored : undefined;
      });
      client.gate = undefined;
      const again = await post(handler, userTurn("chat-leave", "hello again", "m-after"));
      expect(again.status).toBe(200);
      await readReply(again);
      expect(errors).toEqual([]);
      const texts = (await getChat(handler, "chat-leave"))
        .flatMap(partsOf)
        .filter((p) => p.type === "text")
        .map((p) => p.text as string);
      expect(texts.join("\n")).not.toMatch(/story|upon a time/i);
      expect(texts).toContain("hello again");
      expect((await store.get("ui-chat/chat-leave"))!.revision).toBeGreaterThan(before.revision);
    });
  }
});

describe("GET /chats and DELETE /chats/:id", () => {
  it("lists the owner's chats newest first, a page at a time, with a cursor and no repeats; a touched chat moves to the front", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { handler } = harness();
    const ids = ["chat-a", "chat-b", "chat-c", "chat-d", "chat-e"];
    for (const [i, id] of ids.entries()) {
      vi.setSystemTime(new Date(Date.UTC(2026, 0, 1, 0, i)));
      await readReply(await post(handler, userTurn(id, `Title of ${id}`)));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const response = await call(
        handler,
        "GET",
        `/chats?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(response.status).toBe(200);
      const page = (await response.json()) as {
        chats: { id: string; title: string; updatedAt: string }[];
        cursor?: string;
      };
      expect(page.chats.length).toBeLessThanOrEqual(2);
      seen.push(...page.chats.map((c) => c.id));
      cursor = page.cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);

    vi.setSystemTime(new Date(Date.UTC(2026, 0, 1, 1)));
    await readReply(await post(handler, userTurn("chat-b", "again", "m-b2")));
    const top = (await (await call(handler, "GET", "/chats?limit=1")).json()) as {
      chats: { id: string; title: string }[];
    };
    expect(top.chats).toEqual([expect.objectContaining({ id: "chat-b", title: "Title of chat-b" })]);
  });

  it("DELETE answers 204; then GET is 404, the chat is gone from the list, and a second DELETE is 404", async () => {
    const { handler } = harness();
    await readReply(await post(handler, userTurn("chat-keep", "keep me")));
    await readReply(await post(handler, userTurn("chat-drop", "drop me")));
    const deleted = await call(handler, "DELETE", "/chats/chat-drop");
    expect(deleted.status).toBe(204);
    await expectProblem(await call(handler, "GET", "/chats/chat-drop"), 404, "chat-not-found");
    const list = (await (await call(handler, "GET", "/chats")).json()) as { chats: { id: string }[] };
    expect(list.chats.map((c) => c.id)).toEqual(["chat-keep"]);
    await expectProblem(await call(handler, "DELETE", "/chats/chat-drop"), 404, "chat-not-found");
  });
});

describe("a response never contradicts the store", () => {
  it("DELETE whose store fails after the row went says it may have happened (not 'nothing was saved'), and GET agrees", async () => {
    const base = new MemorySessionStore();
    const failing = new Proxy(base, {
      get(target, key, receiver) {
        if (key === "delete")
          return async (id: string, options?: { expectedRevision?: number }) => {
            await target.delete(id, options);
            throw new Error("connection lost after the delete");
          };
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const { handler } = harness({}, failing);
    await readReply(await post(handler, userTurn("chat-del", "delete me")));
    const response = await call(handler, "DELETE", "/chats/chat-del");
    const body = await expectProblem(response, 500, "internal", ["connection lost"]);
    expect(body.detail).not.toMatch(/nothing was saved/);
    expect(body.detail).toMatch(/may not have been carried out/);
    // What the store holds now: the chat is gone, and GET says so.
    await expectProblem(await call(handler, "GET", "/chats/chat-del"), 404, "chat-not-found");
  });

  it("DELETE whose store fails before anything was removed keeps the chat, and says the request may not have happened", async () => {
    const base = new MemorySessionStore();
    const failing = new Proxy(base, {
      get(target, key, receiver) {
        if (key === "messages")
          return new Proxy(target.messages, {
            get(log, name, r) {
              if (name === "deleteMessages") return async () => Promise.reject(new Error("log unavailable"));
              const value = Reflect.get(log, name, r) as unknown;
              return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(log) : value;
            },
          });
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const { handler } = harness({}, failing);
    await readReply(await post(handler, userTurn("chat-del2", "keep me")));
    const body = await expectProblem(await call(handler, "DELETE", "/chats/chat-del2"), 500, "internal");
    expect(body.detail).toMatch(/may not have been carried out/);
    expect((await getChat(handler, "chat-del2")).map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});

describe("errors inside the stream", () => {
  it("a model failure after the stream started ends it with an error chunk that names nothing internal; the user's message and the partial answer are kept, marked failed", async () => {
    const { handler, client, errors, store } = harness();
    client.getStreamingResponse = async function* () {
      yield { role: "assistant", contents: [{ $type: "text", text: "Half an ans" }] };
      throw new Error("connection reset by db-secret-host:5432");
    };
    const response = await post(handler, userTurn("chat-fail", "hi"));
    expect(response.status).toBe(200);
    const { chunks, errors: streamErrors } = await readReply(response);
    const error = chunks.find((c) => c.type === "error") as { errorText: string } | undefined;
    const said = "The reply failed; your message and what was written so far are saved.";
    expect(error?.errorText).toBe(said);
    // What useChat shows: readUIMessageStream reports it as the chat's error.
    expect(streamErrors.map((e) => (e as Error).message)).toEqual([said]);
    expect(JSON.stringify(chunks)).not.toContain("secret");
    expect(errors).toHaveLength(1);
    const chat = await getChat(handler, "chat-fail");
    expect(chat.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(chat[1].metadata).toEqual({ statebag: { finish: "failed" } });
    expect(partsOf(chat[1]).find((p) => p.type === "text")!.text).toBe("Half an ans");
    expect((await store.get("ui-chat/chat-fail"))!.meta.labels).toEqual({ "statebag.type": "chat" });
  });
});
