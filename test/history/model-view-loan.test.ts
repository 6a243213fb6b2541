/**
 * Issue #25: a client that reads its request only while its call runs
 * (`readsMessagesOnlyDuringCall`) is sent the kept model view of a stored log itself, with the
 * request pushed after it, instead of a copy of the whole history per call. These tests hold the
 * run to that: the array goes back to the cache cut back to the history on every exit path, a
 * concurrent run never sees another run's request, a client without the capability gets arrays it
 * can keep, and what the model is sent is the same with and without it.
 */
import { describe, expect, it } from "vitest";
import { ChatClientAgent, StoredChatHistoryProvider } from "../../src/agent.js";
import type {
  ChatClient,
  ChatClientMetadata,
  ChatOptions,
  ChatResponse,
  ChatResponseUpdate,
} from "../../src/runtime/agent/chat-client.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { messageText, type AgentSession, type ChatMessage } from "../../src/index.js";
import { openStore, type MessageLog } from "../../src/stores.js";
import { approvalRequestFor } from "../../src/runtime/agent/approvals.js";
import { OpenAIChatClient } from "../../src/runtime/agent/clients/openai-chat-client.js";
import { AISDKChatClient, type AISDKLanguageModel } from "../../src/runtime/agent/clients/ai-sdk-chat-client.js";
import type { AITool } from "../../src/runtime/agent/tools.js";

const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });
const assistant = (text: string): ChatMessage => ({ role: "assistant", contents: [{ $type: "text", text }] });
const texts = (messages: readonly ChatMessage[]) => messages.map(messageText);

/** Opens when `open()` is called; `wait` resolves then (or rejects when the signal fires first). */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * A deterministic model: after a user message, a call to `lookup` when the text says "tool",
 * else an echo; after a tool result, a text. It records, during each call, a copy of what it
 * was sent and (for these tests only) the array itself, to see the array it was lent.
 */
class Model implements ChatClient {
  readonly metadata: ChatClientMetadata = { providerName: "model", supportsServiceStorage: false };
  readonly copies: ChatMessage[][] = [];
  readonly arrays: (readonly ChatMessage[])[] = [];
  /** Set to make the next calls wait (or fail) before answering. */
  hold: Promise<void> | undefined;
  fail: Error | undefined;

  constructor(readonly readsMessagesOnlyDuringCall: boolean) {}

  async getResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    this.arrays.push(messages);
    this.copies.push(structuredClone([...messages]));
    const sent = this.copies.length;
    if (this.hold) {
      const hold = this.hold;
      await new Promise<void>((resolve, reject) => {
        void hold.then(resolve);
        options.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true });
      });
    }
    if (this.fail) throw this.fail;
    // Read again after waiting: the array must still be this request.
    expect(messages.length).toBe(this.copies[sent - 1].length);
    const last = messages[messages.length - 1];
    const reply: ChatMessage =
      last.role === "tool"
        ? assistant(`the tool said ${JSON.stringify((last.contents[0] as { result?: unknown }).result)}`)
        : messageText(last).includes("tool")
          ? {
              role: "assistant",
              contents: [{ $type: "functionCall", callId: `call-${sent}`, name: "lookup", arguments: { q: "x" } }],
            }
          : assistant(`echo ${messageText(last)} after ${messages.length - 1}`);
    return { messages: [reply] };
  }

  async *getStreamingResponse(
    messages: readonly ChatMessage[],
    options?: ChatOptions,
  ): AsyncIterable<ChatResponseUpdate> {
    const response = await this.getResponse(messages, options);
    for (const m of response.messages) yield { role: m.role, contents: m.contents };
  }
}

const lookup: AITool = { name: "lookup", execute: (args) => ({ found: args.q ?? null }) };

/** An agent on a fresh log of `seed` in a memory store, the provider's warm cache on. */
async function setup(client: ChatClient, seed: readonly ChatMessage[], tools: AITool[] = [lookup]) {
  const store = await openStore("memory:");
  const log: MessageLog = store.messages;
  const storageId = `log-${Math.random().toString(36).slice(2)}`;
  if (seed.length) await log.appendMessages(storageId, [...seed], { operationId: "seed" });
  const history = new StoredChatHistoryProvider({ log, commit: "run", cacheBytes: 64 * 1024 * 1024 });
  const agent = new ChatClientAgent({ client, name: "loan", history, tools });
  // Each run gets its own session object on the one log (as an app keeping only the id does).
  const session = (): AgentSession => agent.createSession({ id: storageId });
  const stored = async () => (await log.readMessages(storageId)).messages;
  return { agent, session, stored };
}

const seed = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? assistant(`a${i}`) : user(`u${i}`)));

describe("a run lends the kept model view to a client that reads it only during its call", () => {
  it("sends the same array every run, its request after the history, and cuts it back after", async () => {
    const model = new Model(true);
    const { agent, session } = await setup(model, seed(6));
    await agent.run("one", session());
    await agent.run("two", session());
    expect(model.arrays[1]).toBe(model.arrays[0]); // lent, given back, lent again: no copy
    expect(texts(model.copies[0])).toEqual([...texts(seed(6)), "one"]);
    expect(texts(model.copies[1])).toEqual([...texts(seed(6)), "one", "echo one after 6", "two"]);
    // Back in the cache: the history only (the run's request went with it).
    expect(texts(model.arrays[1])).toEqual(texts(model.copies[1]).slice(0, 8));
  });

  it("gives the array back when the model fails, and the next run sends exactly its own request", async () => {
    const model = new Model(true);
    const { agent, session, stored } = await setup(model, seed(4));
    await agent.run("one", session());
    model.fail = new Error("model down");
    await expect(agent.run("lost", session())).rejects.toThrow("model down");
    expect(model.arrays[1].length).toBe(6);
    model.fail = undefined;
    await agent.run("two", session());
    expect(model.arrays[2]).toBe(model.arrays[0]);
    expect(texts(model.copies[2])).toEqual([...texts(seed(4)), "one", "echo one after 4", "two"]);
    expect(texts(await stored())).toEqual([...texts(seed(4)), "one", "echo one after 4", "two", "echo two after 6"]);
  });

  it("gives the array back when the run is aborted", async () => {
    const model = new Model(true);
    const { agent, session } = await setup(model, seed(4));
    const { opened } = gate();
    model.hold = opened; // never opens: the abort ends the call
    const abort = new AbortController();
    const running = agent.run("aborted", session(), { signal: abort.signal });
    await new Promise((resolve) => setTimeout(resolve, 5));
    abort.abort(new Error("user left"));
    await expect(running).rejects.toThrow("user left");
    expect(model.arrays[0].length).toBe(4);
    model.hold = undefined;
    await agent.run("next", session());
    expect(model.arrays[1]).toBe(model.arrays[0]);
    expect(texts(model.copies[1])).toEqual([...texts(seed(4)), "next"]);
  });

  it("keeps a stream's array until the stream has ended, even after the run stopped", async () => {
    const release = gate();
    let reading = false;
    // A stream that keeps reading its request after its consumer left, until `release` opens.
    class Lingering extends Model {
      override async *getStreamingResponse(messages: readonly ChatMessage[]): AsyncIterable<ChatResponseUpdate> {
        this.arrays.push(messages);
        this.copies.push([...messages]);
        yield { role: "assistant", contents: [{ $type: "text", text: "once " }] };
        reading = true;
        await release.opened;
        expect(texts(messages)).toEqual(texts(this.copies[0])); // still its request
        reading = false;
        yield { role: "assistant", contents: [{ $type: "text", text: "upon" }] };
      }
    }
    const model = new Lingering(true);
    const { agent, session } = await setup(model, seed(4));
    const stream = agent.runStream("story", session());
    for await (const _ of stream) break; // the consumer leaves after the first update
    expect(reading).toBe(true);
    // The client still reads it: not given back, so the next run gets a copy of the history.
    await agent.run("meanwhile", session());
    expect(model.arrays[1]).not.toBe(model.arrays[0]);
    expect(texts(model.copies[1])).toEqual([...texts(seed(4)), "meanwhile"]);
    expect(texts(model.arrays[0])).toEqual([...texts(seed(4)), "story"]);
    release.open();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(reading).toBe(false);
    expect(texts(model.arrays[0])).toEqual(texts(seed(4))); // its stream ended: cut back
  });

  it("cuts the array back after a stream the consumer stops early", async () => {
    const model = new Model(true);
    const { agent, session } = await setup(model, seed(4));
    for await (const _ of agent.runStream("story", session())) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(model.arrays[0].length).toBe(4);
    await agent.run("after", session());
    expect(model.arrays[1]).toBe(model.arrays[0]);
  });

  it("two concurrent runs on one log each send exactly their history and their own request", async () => {
    const model = new Model(true);
    const { agent, session, stored } = await setup(model, seed(4));
    await agent.run("warm", session());
    const { open, opened } = gate();
    model.hold = opened;
    const a = agent.run("from a", session());
    const b = agent.run("from b", session());
    await new Promise((resolve) => setTimeout(resolve, 5));
    open();
    await Promise.all([a, b]);
    const history = [...texts(seed(4)), "warm", "echo warm after 4"];
    expect(texts(model.copies[1])).toEqual([...history, "from a"]);
    expect(texts(model.copies[2])).toEqual([...history, "from b"]);
    expect(model.arrays[2]).not.toBe(model.arrays[1]); // the second run did not get the lent array
    // Both turns are in the log, and the next run sends them, lent again.
    model.hold = undefined;
    await agent.run("after", session());
    const after = model.copies[3];
    expect(texts(after).slice(0, 6)).toEqual(history);
    expect(texts(after).slice(6).sort()).toEqual(
      ["from a", "from b", "echo from a after 6", "echo from b after 6", "after"].sort(),
    );
    expect(texts(await stored())).toHaveLength(12);
  });

  it("pushes tool rounds onto the lent array and gives it back after them", async () => {
    const model = new Model(true);
    const { agent, session } = await setup(model, seed(2));
    const response = await agent.run("use the tool", session());
    expect(texts(response.messages).pop()).toBe('the tool said {"found":"x"}');
    expect(model.arrays[1]).toBe(model.arrays[0]);
    expect(model.copies[1].map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "tool"]);
    expect(model.arrays[0].length).toBe(2);
  });
});

describe("what the model is sent is the same with and without the capability", () => {
  const approvalHistory = (): ChatMessage[] => {
    const call = { $type: "functionCall" as const, callId: "c0", name: "lookup", arguments: { q: "y" } };
    return [
      user("u0"),
      { role: "assistant", contents: [approvalRequestFor(call, "r0")] },
      { role: "user", contents: [{ $type: "toolApprovalResponse", requestId: "r0", approved: true }] },
      { role: "tool", contents: [{ $type: "functionResult", callId: "c0", result: { found: "y" } }] },
      assistant("a4"),
    ];
  };

  it("deep-equal requests over runs with tool rounds, and approval contents rewritten", async () => {
    const lending = new Model(true);
    const copying = new Model(false);
    const a = await setup(lending, approvalHistory());
    const b = await setup(copying, approvalHistory());
    for (const input of ["hello", "use the tool", "again", "use the tool once more"]) {
      await a.agent.run(input, a.session());
      await b.agent.run(input, b.session());
    }
    // Ids the history gave the messages (msg-<uuid>) are random: compare with them blanked.
    const ids = (copies: ChatMessage[][]) => JSON.parse(JSON.stringify(copies).replace(/"msg-[0-9a-f-]{36}"/g, '"id"'));
    expect(ids(lending.copies)).toEqual(ids(copying.copies));
    expect(lending.copies).toHaveLength(6);
    // The model sees the approved call as a plain call; the log keeps the approval contents.
    expect(lending.copies[0][1].contents).toEqual([
      { $type: "functionCall", callId: "c0", name: "lookup", arguments: { q: "y" } },
    ]);
    expect(lending.copies[0].map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect((await a.stored())[1].contents[0].$type).toBe("toolApprovalRequest");
    expect(lending.arrays[5]).toBe(lending.arrays[0]);
  });

  it("a run that stops for approval and one that answers it send the same requests either way", async () => {
    const guarded: AITool = { ...lookup, requiresApproval: true };
    const run = async (client: Model) => {
      const s = await setup(client, seed(2), [guarded]);
      const session = s.session(); // the pending round lives in the session's state bag
      const stopped = await s.agent.run("use the tool", session);
      const request = stopped.messages.flatMap((m) => m.contents).find((c) => c.$type === "toolApprovalRequest") as {
        requestId: string;
      };
      await s.agent.run([], session, { approvals: [{ requestId: request.requestId, approved: true }] });
      await s.agent.run("thanks", session);
      return s;
    };
    const lending = new Model(true);
    const copying = new Model(false);
    await run(lending);
    await run(copying);
    // Request ids and the ids the history gave messages are random: compare with them blanked.
    const blank = (copies: ChatMessage[][]) =>
      JSON.parse(
        JSON.stringify(copies)
          .replace(/"requestId":"[^"]*"/g, "")
          .replace(/"msg-[0-9a-f-]{36}"/g, '"id"'),
      );
    expect(blank(lending.copies)).toEqual(blank(copying.copies));
    expect(JSON.stringify(lending.copies)).not.toContain("toolApproval");
    expect(texts(lending.copies.at(-1)!).at(-1)).toBe("thanks");
    expect(lending.arrays.at(-1)).toBe(lending.arrays[0]); // lent in every run, the answering one too
  });
});

describe("a client without the capability gets arrays it may keep", () => {
  it("a new array per call, unchanged by later runs", async () => {
    const model = new Model(false);
    const { agent, session } = await setup(model, seed(4));
    await agent.run("one", session());
    await agent.run("use the tool", session());
    await agent.run("three", session());
    expect(new Set(model.arrays).size).toBe(model.arrays.length);
    model.arrays.forEach((array, i) => expect(array).toEqual(model.copies[i]));
  });

  it("a wrapper forwarding a lending client's metadata does not claim it", async () => {
    const inner = new Model(true);
    const kept: (readonly ChatMessage[])[] = [];
    const wrapper: ChatClient = {
      metadata: inner.metadata,
      getResponse: (m, o) => (kept.push(m), inner.getResponse(m, o)),
      getStreamingResponse: (m, o) => inner.getStreamingResponse(m, o),
    };
    const { agent, session } = await setup(wrapper, seed(4));
    await agent.run("one", session());
    await agent.run("two", session());
    expect(kept[1]).not.toBe(kept[0]);
    expect(texts(kept[0])).toEqual([...texts(seed(4)), "one"]);
  });
});

describe("the built-in clients' capability", () => {
  it("ScriptedChatClient has it, and keeps copies: `requests` and what rules see do not change later", async () => {
    const seen: (readonly ChatMessage[])[] = [];
    const client = new ScriptedChatClient({
      usage: false,
      rules: [{ when: (context) => (seen.push(context.messages), false), reply: "never" }],
    });
    expect(client.readsMessagesOnlyDuringCall).toBe(true);
    const { agent, session } = await setup(client, seed(4));
    await agent.run("one", session());
    await agent.run("two", session());
    expect(texts(client.requests[0].messages)).toEqual([...texts(seed(4)), "one"]);
    expect(client.requests[1].messages).toHaveLength(7);
    expect(texts(seen[0])).toEqual([...texts(seed(4)), "one"]);
  });

  it("ScriptedChatClient without recordRequests keeps no requests and answers the same", async () => {
    const quiet = new ScriptedChatClient({ usage: false, recordRequests: false });
    const { agent, session } = await setup(quiet, seed(4));
    const response = await agent.run("hello", session());
    expect(quiet.requests).toHaveLength(0);
    expect(texts(response.messages)).toEqual(['You said: "hello". I can see 4 earlier messages.']);
  });

  it("a hosted ScriptedChatClient keeps a copy of the conversation", async () => {
    const client = new ScriptedChatClient({ hosted: true, usage: false });
    const sent = [user("hi")];
    const response = await client.getResponse(sent, { store: true });
    sent.push(user("changed later"));
    expect(texts(client.conversation(response.conversationId as string)!)).toEqual([
      "hi",
      'You said: "hi". I can see 0 earlier messages.',
    ]);
  });

  it("is lost when getResponse or getStreamingResponse is overridden or replaced, and declared again by choice", () => {
    class Logging extends ScriptedChatClient {
      override getResponse(messages: readonly ChatMessage[], options?: ChatOptions) {
        return super.getResponse(messages, options);
      }
    }
    class Declared extends Logging {
      override get readsMessagesOnlyDuringCall() {
        return true;
      }
    }
    expect(new Logging().readsMessagesOnlyDuringCall).toBe(false);
    expect(new Declared().readsMessagesOnlyDuringCall).toBe(true);
    const patched = new ScriptedChatClient();
    patched.getStreamingResponse = async function* () {};
    expect(patched.readsMessagesOnlyDuringCall).toBe(false);
  });

  it("OpenAIChatClient and AISDKChatClient have it", () => {
    expect(new OpenAIChatClient({ model: "m", apiKey: "k" }).readsMessagesOnlyDuringCall).toBe(true);
    const model = { specificationVersion: "v4", provider: "p", modelId: "m" } as unknown as AISDKLanguageModel;
    const sdk = new AISDKChatClient(model);
    expect(sdk.readsMessagesOnlyDuringCall).toBe(true);
    sdk.getResponse = async () => ({ messages: [] });
    expect(sdk.readsMessagesOnlyDuringCall).toBe(false);
  });
});
