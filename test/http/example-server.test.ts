/**
 * The example chat app's server keeps the API's bounded request timeouts (issue 34, item 7), not
 * Node's defaults (a client trickling its headers holds a connection for a minute): it builds its
 * own `node:http` server (it serves its pages too), so it must pass `chatServerOptions()`.
 */
import { describe, expect, it } from "vitest";
import { startChatApp, scriptedClient } from "../../examples/chat-app/server.js";
import { chatServerOptions } from "../../src/runtime/http/node.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";

describe("examples/chat-app server", () => {
  it("has the chat server's headers and request timeouts", async () => {
    const app = await startChatApp({ client: scriptedClient(0), store: new MemorySessionStore(), port: 0 });
    try {
      const expected = chatServerOptions();
      expect(app.server.headersTimeout).toBe(expected.headersTimeout);
      expect(app.server.requestTimeout).toBe(expected.requestTimeout);
      expect(app.server.headersTimeout).not.toBe(60_000); // Node's default
    } finally {
      await app.close();
    }
  });
});
