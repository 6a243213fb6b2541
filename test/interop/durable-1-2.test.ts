import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { detectSessionShape, exportSessionDocument, importSession } from "../../src/runtime/interop/index.js";
import type { AgentSession } from "../../src/runtime/core/session.js";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/maf/${name}`, import.meta.url), "utf8"));
const stored = (session: AgentSession) => deserializeSession(serializeSession(session, { validate: true }));
const history = (s: AgentSession) =>
  (
    s.stateBag["statebag.chatHistory"] as unknown as {
      messages: { role: string; messageId?: string; contents: { $type: string }[] }[];
    }
  ).messages;

describe("durable agent state 1.2.0", () => {
  const doc = fixture("43_durable_state_1_2_0.json");
  it("is recognised as durable and round-trips losslessly (session, ingestedPositions, truncation, errorResponse and compaction entries)", () => {
    expect(detectSessionShape(doc)?.shape).toBe("durable");
    const session = stored(importSession(doc, { from: "durable", id: "d" }));
    expect(exportSessionDocument(session, { to: "durable" })).toEqual(doc);
  });
  it("keeps stable message ids and reads the approval request inside the unknown wrapper", () => {
    const messages = history(importSession(doc, { from: "durable", id: "d" }));
    expect(messages.map((m) => m.messageId)).toEqual([
      "corr-1:request:0",
      "corr-2:request:0",
      "corr-2:response:0",
      "compaction-1:summary:0",
    ]);
    expect(messages[2].contents[0].$type).toBe("toolApprovalRequest");
  });
});

describe("durable agent state 2.0 (preview)", () => {
  const doc = fixture("44_durable_state_2_0_preview_arguments_developer.json");
  it("is refused as durable and read as durable-2-preview, round-tripping losslessly", () => {
    expect(detectSessionShape(doc)?.shape).toBe("durable-2-preview");
    expect(() => importSession(doc, { from: "durable" })).toThrow(
      expect.objectContaining({ hint: expect.stringMatching(/durable-2-preview/) }),
    );
    const session = stored(importSession(doc, { from: "durable-2-preview", id: "d2" }));
    expect(exportSessionDocument(session, { to: "durable-2-preview" })).toEqual(doc);
  });
  it("keeps the developer role, string arguments (verbatim) and object arguments (as a function call)", () => {
    const messages = history(importSession(doc, { from: "durable-2-preview", id: "d2" }));
    expect(messages[0].role).toBe("developer");
    expect(messages[2].contents.map((c) => c.$type)).toEqual([
      "statebag.foreign",
      "functionCall",
      "hologramFrame",
      "statebag.foreign",
    ]);
  });
  it("the published 2.0 fixture still round-trips", () => {
    const published = fixture("31_durable_state_2_0_preview.json");
    expect(
      exportSessionDocument(stored(importSession(published, { from: "durable-2-preview", id: "p" })), {
        to: "durable-2-preview",
      }),
    ).toEqual(published);
  });
});
