/**
 * How a reply's events reach the response: the events the turn sends in one turn of the event loop
 * go out as one write (one encode, one enqueue, one read for the client), and an event is never held
 * back waiting for the next: what the model streamed before it paused is readable while it waits.
 */
import { describe, expect, it } from "vitest";
import { Gate, harness, post, readReply, userTurn } from "./setup.js";

const decoder = new TextDecoder();

/** Reads the body until `until` holds for the text so far; returns that text and the number of reads. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  until: (text: string) => boolean,
): Promise<{ text: string; reads: number }> {
  let text = "";
  let reads = 0;
  while (!until(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    reads++;
    text += decoder.decode(value, { stream: true });
  }
  return { text, reads };
}

/** The `data:` payloads of SSE text, in order. */
function events(text: string): string[] {
  return text
    .split("\n\n")
    .filter((event) => event.length > 0)
    .map((event) => {
      expect(event.startsWith("data: ")).toBe(true);
      return event.slice("data: ".length);
    });
}

describe("the reply's SSE writes", () => {
  it("events sent in one turn of the event loop arrive together, each whole; the stream ends with [DONE]", async () => {
    const { handler } = harness();
    // Answered at once by the scripted model: every chunk of the reply is produced before the commit.
    const response = await post(handler, userTurn("sse-1", "Tell me a story"));
    const reader = response.body!.getReader();
    const { text, reads } = await readUntil(reader, () => false);
    const payloads = events(text);
    expect(payloads.at(-1)).toBe("[DONE]");
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as { type: string });
    expect(chunks[0].type).toBe("start");
    expect(chunks.at(-1)!.type).toBe("finish");
    expect(chunks.filter((c) => c.type === "text-delta").length).toBeGreaterThan(3);
    // Fewer writes than events: the ones produced together were written together.
    expect(reads).toBeLessThan(payloads.length);
  });

  it("what the model streamed before it paused is readable while it waits; the rest follows when it goes on", async () => {
    const { handler, client } = harness();
    const gate = (client.gate = new Gate());
    const response = await post(handler, userTurn("sse-2", "Tell me a story"));
    const reader = response.body!.getReader();
    await gate.reachedPromise;
    // The model waits at the gate after "upon": those deltas are out without any further event.
    const before = await readUntil(reader, (text) => text.includes("upon"));
    expect(before.text).toContain("upon");
    expect(before.text).not.toContain("[DONE]");
    gate.open();
    const after = await readUntil(reader, (text) => text.includes("[DONE]"));
    const all = events(before.text + after.text);
    expect(all.at(-1)).toBe("[DONE]");
    const said = all
      .slice(0, -1)
      .map((p) => JSON.parse(p) as { type: string; delta?: string })
      .filter((c) => c.type === "text-delta")
      .map((c) => c.delta)
      .join("");
    expect(said).toBe("Once upon a time there was a chat that was never saved.");
  });

  it("useChat's parser reads the coalesced stream as the same message", async () => {
    const { handler } = harness();
    const reply = await readReply(await post(handler, userTurn("sse-3", "Tell me a story")));
    expect(reply.errors).toEqual([]);
    const text = reply.message.parts
      .filter((p): p is { type: "text"; text: string } => p.type === "text")
      .map((p) => p.text)
      .join("");
    expect(text).toBe("Once upon a time there was a chat that was never saved.");
  });
});
