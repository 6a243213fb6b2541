/**
 * An explicit shape still refuses a document that is not a session of it (issue #21, item 15):
 * a lone chat message or an array of them used to import with exit 0 as an empty session holding
 * the message as unknown members.
 */
import { describe, expect, it } from "vitest";
import {
  describeNonSession,
  detectSessionShape,
  importSession,
  InteropError,
  SHAPE_NAMES,
} from "../../src/runtime/interop/index.js";

const meaiMessage = { role: "user", contents: [{ $type: "text", text: "Hello" }] };
const pythonMessage = { type: "chat_message", role: "user", contents: [{ type: "text", text: "Hello" }] };
const openAiMessage = { role: "assistant", content: "Hi" };

function refusal(doc: unknown, from: (typeof SHAPE_NAMES)[number]): InteropError {
  try {
    importSession(doc as object, { from });
  } catch (error) {
    expect(error, from).toBeInstanceOf(InteropError);
    return error as InteropError;
  }
  throw new Error(`--from ${from} imported ${JSON.stringify(doc)}`);
}

describe("a chat message is not a session, whatever --from says", () => {
  it.each(SHAPE_NAMES)("--from %s refuses a lone message and an array of messages, saying what they are", (from) => {
    for (const message of [meaiMessage, pythonMessage, openAiMessage]) {
      const one = refusal(message, from);
      expect(one.problem).toBe("this is a single chat message, not a session");
      expect(one.pointer).toBe("");
      expect(one.hint).toMatch(/no --from reads a lone message/);
      const many = refusal([message, message], from);
      expect(many.problem).toBe("this is an array of 2 chat messages, not a session");
      // Text too, not only parsed documents.
      expect(refusal(JSON.stringify(message), from).problem).toBe("this is a single chat message, not a session");
    }
  });

  it("the hint wraps the messages in the family their contents are written in", () => {
    expect(describeNonSession(meaiMessage)?.hint).toMatch(
      /"stateBag": \{"InMemoryChatHistoryProvider".*--from dotnet$/,
    );
    expect(describeNonSession([pythonMessage])?.hint).toMatch(/"type": "session".*--from python$/);
  });

  it("auto-detection recognises no shape, and says what the document is", () => {
    expect(detectSessionShape(meaiMessage)).toBeUndefined();
    expect(describeNonSession(meaiMessage)?.problem).toBe("this is a single chat message, not a session");
    expect(describeNonSession([])?.problem).toBe("expected an object, found an array (empty): not a session");
    expect(describeNonSession("text")?.problem).toBe("expected an object, found a JSON string: not a session");
    // A session with a "role" member somewhere is still a session.
    expect(describeNonSession({ conversationId: "c", role: "user" })).toBeUndefined();
  });
});

describe("shapes whose members are all optional refuse a document with none of them", () => {
  it("a Python session given as dotnet-thread names the shape that fits", () => {
    const python = { type: "session", session_id: "s1", state: {} };
    const error = refusal(python, "dotnet-thread");
    expect(error.problem).toMatch(
      /^this looks like a python document \("type": "session" with "session_id"\), with none of the members a dotnet-thread document has/,
    );
    expect(error.hint).toMatch(/--from python/);
  });

  it.each([
    "dotnet-thread",
    "dotnet-provider-state",
    "dotnet-a2a-thread",
    "dotnet-service-thread",
    "python-thread",
  ] as const)("%s refuses an object of unknown members, and still reads {} and its own documents", (from) => {
    expect(refusal({ foo: 1 }, from).problem).toMatch(
      new RegExp(`^the document has none of the members a ${from} document has`),
    );
    expect(importSession({}, { from, id: "empty" }).id).toBe("empty");
  });

  it("documents of the shape still import, with unknown members kept", () => {
    const session = importSession({ conversationId: "c1", extra: 1 }, { from: "dotnet-thread", id: "t" });
    expect(session.conversationId).toBe("c1");
  });
});
