/**
 * Every StatebagError says how to fix it: `hint` is never empty. Each subclass in the sources is
 * triggered here (through the API that throws it where that is practical) and a subclass added
 * without a case fails the audit below.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigurationError, StatebagError, type StatebagErrorCode } from "../../src/runtime/core/errors.js";
import { ProviderSessionState } from "../../src/runtime/core/state-bag.js";
import { defineMigration, MigrationError } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import { parseJson } from "../../src/runtime/json/safe-json.js";
import { deserializeSession, type SessionValidationError } from "../../src/runtime/persistence/serialization.js";
import {
  SessionNotFoundError,
  StoreAuthenticationError,
  StoreKeyConflictError,
  StoreNotSetUpError,
  StoreUnavailableError,
} from "../../src/runtime/stores/errors.js";
import { HistoryProviderMismatchError } from "../../src/runtime/agent/providers/chat-history-provider.js";
import { ToolApprovalError } from "../../src/runtime/agent/approvals.js";
import { openStore } from "../../src/stores.js";
import { chatNotFound } from "../../src/runtime/http/chat-error.js";
import { toProblem } from "../../src/runtime/http/problem.js";
import { importSession } from "../../src/runtime/interop/index.js";
import { ChannelKeyError } from "../../src/runtime/group-chat/channel.js";
import { AgentChatRestoreError } from "../../src/runtime/group-chat/serializer.js";
import {
  type InvalidStoredMessageError,
  InvalidStoredValueError,
  StoredSessionIdError,
  defaultMessageCodec,
} from "../../src/runtime/stores/codec.js";
import { NodeSqliteMissingError } from "../../src/runtime/stores/sqlite/node-sqlite.js";
import { runMeta, type ScriptedClient } from "../../src/runtime/stores/redis/scripts.js";
import { BulkMigrationError } from "../../src/runtime/stores/migrate.js";
import { ToolchainMissingError } from "../../src/cli/toolchain.js";
import { driverResolution } from "../../src/runtime/stores/drivers.js";
import { importOptional } from "../../src/runtime/core/optional-dependency.js";
import { toChatMessages } from "../../src/runtime/agent/clients/openai-content.js";
import { OpenAIChatClient } from "../../src/runtime/agent/clients/openai-chat-client.js";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { type ChatMessage, userMessage } from "../../src/runtime/core/messages.js";
import { startOpenAIServer } from "../clients/openai-server.js";
import { EncryptedStoreError } from "../../src/runtime/stores/encryption/errors.js";
import { encryptedMessageCodec, encryptedSessionCodec } from "../../src/runtime/stores/encryption/codec.js";
import { createKeyring } from "../../src/runtime/stores/encryption/keyring.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { createSessionData } from "../../src/runtime/core/session.js";
import { fromUIMessages } from "../../src/runtime/ui-messages/from-ui.js";
import { openAIError } from "../clients/fixtures/openai.js";
import { NotALangGraphThreadError } from "../../src/runtime/langgraph/document.js";
import { BlobCorruptError, BlobNotFoundError } from "../../src/runtime/blobs/blob-store.js";
import { BlobUploadLostError } from "../../src/runtime/blobs/chunked.js";
import { memoryBlobStore } from "../../src/runtime/blobs/memory.js";
import { S3BlobStoreError } from "../../src/runtime/blobs/s3.js";
import { resolveBlobReferences } from "../../src/runtime/blobs/references.js";
import { OpenAIAgentsItemError } from "../../src/runtime/openai-agents/items.js";
import { OpenAIAgentsImportError } from "../../src/runtime/openai-agents/import.js";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Runs `fn`, which must throw; returns what it threw. */
async function caught(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

/** How each subclass is triggered. Classes only some modules export are looked up by name. */
const cases: Record<string, () => Promise<unknown> | unknown> = {
  StatebagError: () => new StatebagError("something-new" as StatebagErrorCode, "what went wrong"),
  ConfigurationError: () => caught(() => openStore("sqlite:")),
  StateTypeError: () =>
    caught(() =>
      new ProviderSessionState<{ $type: "acme.A"; notes: string[] }>("k", {
        stateType: "acme.A",
        version: 1,
        initial: () => ({ $type: "acme.A", notes: [] }),
      }).read({
        id: "s",
        stateBag: { k: { $type: "acme.B" } },
      }),
    ),
  StateVersionError: () =>
    caught(() =>
      new ProviderSessionState<{ $type: "acme.A"; notes: string[] }>("k", {
        stateType: "acme.A",
        version: 1,
        initial: () => ({ $type: "acme.A", notes: [] }),
      }).read({
        id: "s",
        stateBag: { k: { $type: "acme.A", $version: 9 } },
      }),
    ),
  // The one the issue found without a hint: a document that does not load.
  SessionValidationError: () =>
    caught(() =>
      deserializeSession({ format: "statebag.session", formatVersion: 1, session: { id: 3, stateBag: {} } }),
    ),
  JsonParseError: () => caught(() => parseJson("{")),
  RegistryError: () =>
    caught(() => new TypeRegistry().register({ $type: "not a valid id!", version: 1, schema: { type: "object" } })),
  MigrationDefinitionError: () =>
    caught(() => defineMigration({ type: "acme.A", from: 2, to: 1, up: (v: object) => v } as never)),
  MigrationError: () => {
    const registry = TypeRegistry.compose(defaultRegistry());
    registry.register({
      $type: "acme.M",
      version: 2,
      schema: { type: "object", properties: { n: { type: "number" } } },
    });
    return caught(() => registry.upgrade({ $type: "acme.M", $version: 1 }));
  },
  ConflictError: async () => {
    const store = await openStore("memory:");
    await store.save({ id: "c", stateBag: {} }, { expectedRevision: null });
    return caught(() => store.save({ id: "c", stateBag: {} }, { expectedRevision: null }));
  },
  InteropError: () => caught(() => importSession('{"stateBag": 3}', { from: "dotnet" })),
  InteropSizeError: () =>
    caught(() =>
      importSession(
        { stateBag: { InMemoryChatHistoryProvider: { messages: [] } } },
        {
          from: "dotnet",
          limits: { maxBytes: 60 },
        },
      ),
    ),
  SessionNotFoundError: () => new SessionNotFoundError("s"),
  StoreNotSetUpError: () =>
    new StoreNotSetUpError(
      "postgres://h/db",
      "the store is not set up",
      "run statebag store setup --store postgres://h/db",
    ),
  StoreUnavailableError: () =>
    new StoreUnavailableError("redis", "redis://h", "get", { cause: new Error("ECONNREFUSED") }),
  InvalidIdError: async () => {
    const store = await openStore("memory:");
    return caught(() => store.get("a\u0000b"));
  },
  StreamClosedError: async () => {
    const store = await openStore("memory:");
    return caught(() => store.streams!.append("no-such-stream", ["{}"], 1000));
  },
  NotALangGraphThreadError: () => new NotALangGraphThreadError("langgraph:t1", "a chat history"),
  OpenAIAgentsImportError: () => new OpenAIAgentsImportError("a number"),
  OpenAIAgentsItemError: () => new OpenAIAgentsItemError("/0/content", "NaN is not JSON"),
  InvalidCursorError: async () => {
    const store = await openStore("memory:");
    return caught(() => store.list({ owner: "o", cursor: "not a cursor" }));
  },
  StoreAuthenticationError: () =>
    new StoreAuthenticationError("postgres", "postgres://u@h/db", "u", "check the password in the store URL"),
  StoreKeyConflictError: () => new StoreKeyConflictError("redis://h", "app:", "app:s:1 is a list"),
  BlobBudgetExceededError: () =>
    caught(() =>
      memoryBlobStore({ limits: { maxBytesPerOwner: 2 } }).put(new Uint8Array(3), { mediaType: "image/png" }),
    ),
  BlobRangeError: async () => {
    const blobs = memoryBlobStore();
    const { hash } = await blobs.put(new Uint8Array(3), { mediaType: "image/png" });
    return caught(() => blobs.get(hash, { range: { start: 5 } }));
  },
  BlobNotFoundError: () => new BlobNotFoundError("a".repeat(64)),
  BlobCorruptError: () =>
    new BlobCorruptError("a".repeat(64), "folder /srv/blobs", "its bytes do not hash to its name"),
  BlobUploadLostError: () => new BlobUploadLostError(),
  BlobReferenceError: () =>
    caught(() =>
      resolveBlobReferences(
        [
          {
            role: "user",
            contents: [{ $type: "statebag.blobReference", hash: "a".repeat(64), mediaType: "image/png", size: 3 }],
          } as unknown as ChatMessage,
        ],
        undefined,
      ),
    ),
  S3BlobStoreError: () =>
    new S3BlobStoreError(
      "s3://bucket/prefix/",
      "blobs.put",
      Object.assign(new Error("denied"), { name: "AccessDenied", $metadata: { httpStatusCode: 403 } }),
    ),
  RedisReplyError: () =>
    runMeta(new Proxy({} as ScriptedClient, { get: () => async () => ["r"] }), "app:{}s:1").catch(
      (error: unknown) => error,
    ),
  MessageNotFoundError: async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    return caught(() => agent.switchBranch(agent.createSession(), "no-such-message"));
  },
  HistoryBranchError: async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    return caught(() => agent.regenerate(agent.createSession()));
  },
  HistoryProviderMismatchError: () =>
    new HistoryProviderMismatchError(
      "s",
      { key: "statebag.chatHistory", $type: "InMemoryChatHistoryState" },
      "StoredChatHistoryProvider",
      "the log is empty",
      "keep the provider the session started with",
    ),
  ToolApprovalError: () =>
    new ToolApprovalError(
      "tool-approval-not-found",
      "no pending approval request req_1",
      "answer a request the last run returned",
      "req_1",
    ),
  ChannelKeyError: () => new ChannelKeyError("two channels share a key", "give each agent its own name"),
  AgentChatRestoreError: () =>
    new AgentChatRestoreError("format" as never, "not an agent chat document", {
      hint: "pass what AgentChatSerializer.serialize wrote",
    }),
  // A message-log row with a key twice.
  InvalidStoredMessageError: () => {
    try {
      defaultMessageCodec.deserialize('{"role":"user","role":"tool","contents":[]}', { logId: "log-1", seq: 2 });
    } catch (e) {
      return e as InvalidStoredMessageError;
    }
    throw new Error("the row was read");
  },
  InvalidStoredValueError: () => new InvalidStoredValueError("session s", "a function", "/session/stateBag/k"),
  // A row stored under one key whose document names another session.
  StoredSessionIdError: () => new StoredSessionIdError("user-1", "user-2"),
  // The default SQLite driver on a Node without node:sqlite (Node 20).
  NodeSqliteMissingError: () => new NodeSqliteMissingError(),
  // A keyring whose key is not 32 bytes.
  EncryptionKeyError: () =>
    caught(() => createKeyring({ current: "k1", keys: { k1: Buffer.alloc(16).toString("base64") } })),
  // A row encrypted for session a, read back as session b (copied onto another id).
  DecryptionError: () => {
    const codec = encryptedSessionCodec({
      keyring: { current: "k1", keys: { k1: Buffer.alloc(32, 7) } },
      store: "sessions",
    });
    const text = codec.serialize(createSessionData({ id: "a" }));
    return caught(() => codec.deserialize(text, "b"));
  },
  // A store that gives the message codec no log id (nothing to bind the row to).
  EncryptionContextError: () =>
    caught(() =>
      encryptedMessageCodec({
        keyring: { current: "k1", keys: { k1: Buffer.alloc(32, 7) } },
        store: "sessions",
      }).serialize(userMessage("hi")),
    ),
  // What the CLI reports for an encrypted row read without a keyring.
  EncryptedStoreError: () => new EncryptedStoreError("session a", "pass --keyring <file> or set STATEBAG_KEYRING"),
  // A save naming another owner than the stored one.
  SessionOwnerError: async () => {
    const store = new MemorySessionStore();
    await store.save(createSessionData({ id: "s" }), { expectedRevision: null, meta: { owner: "ada" } });
    const { revision } = (await store.get("s"))!;
    return caught(() =>
      store.save(createSessionData({ id: "s" }), { expectedRevision: revision, meta: { owner: "bob" } }),
    );
  },
  // A UI message that is not an object.
  UIMessageError: () => caught(() => fromUIMessages([42 as never])),
  // The session flow of the chat handler, and the problem an error is answered with.
  ChatError: () => chatNotFound(),
  HttpProblem: () => toProblem(new SessionNotFoundError("ui-chat/x"), "GET"),
  BulkMigrationError: () => new BulkMigrationError("the store cannot be migrated", "set it up first"),
  ToolchainMissingError: () => new ToolchainMissingError(["ts-morph"], "gen", "npm i -D ts-morph"),
  // A postgres:// store whose driver package is not installed (the resolver points at a missing name).
  DriverMissingError: async () => {
    const real = driverResolution.moduleName;
    driverResolution.moduleName = (driver) => `statebag-test-not-installed-${driver}`;
    try {
      return await caught(() => openStore("postgres://app@127.0.0.1:1/app"));
    } finally {
      driverResolution.moduleName = real;
    }
  },
  // How a model client loads its optional SDK, with a package that is not installed.
  MissingDependencyError: () =>
    caught(() =>
      importOptional(
        "statebag-test-no-such-sdk",
        "OpenAIChatClient",
        () => import("statebag-test-no-such-sdk" as string),
      ),
    ),
  // Chat Completions cannot carry a link to a video: refused, not silently dropped.
  UnsupportedContentError: () =>
    caught(() =>
      toChatMessages([userMessage([{ $type: "uri", uri: "https://example.org/clip.mp4", mediaType: "video/mp4" }])]),
    ),
  // The service refuses the API key (a loopback server speaking the OpenAI wire format).
  ModelServiceError: async () => {
    const server = await startOpenAIServer();
    try {
      server.reply(
        openAIError(401, "Incorrect API key provided: test-key.", "invalid_request_error", "invalid_api_key"),
      );
      const agent = new ChatClientAgent({
        client: new OpenAIChatClient({
          model: "gpt-4.1-mini",
          baseURL: server.baseURL,
          apiKey: "test-key",
          maxRetries: 0,
        }),
      });
      return await caught(() => agent.run("hi", agent.createSession()));
    } finally {
      await server.close();
    }
  },
};

/** What the hint must say, for the classes whose hint names a specific fix. */
const specificHints: Record<string, string> = {
  DriverMissingError: "npm i pg",
  NodeSqliteMissingError: "?driver=better-sqlite3",
  MissingDependencyError: "npm i statebag-test-no-such-sdk",
  UnsupportedContentError: "only image URLs can be sent by link",
  ModelServiceError: "check the API key",
  InvalidIdError: "NUL",
  InvalidCursorError: "pass the cursor of the previous page unchanged",
  StateVersionError: "newer release",
  ToolchainMissingError: "npm i -D ts-morph",
  InteropSizeError: "raise limits.maxBytes to at least",
  StreamClosedError: "between open and finish",
  NotALangGraphThreadError: "idPrefix",
  BlobBudgetExceededError: "maxBytesPerOwner",
  BlobUploadLostError: "graceMs",
  BlobReferenceError: "store.blobs.reader(owner)",
};

/**
 * Every class declared (in the committed files of src/ and generator/) as a subclass of
 * StatebagError, directly or not.
 */
function declaredSubclasses(): string[] {
  const parents = new Map<string, string>();
  const files = execFileSync("git", ["ls-files", "src", "generator"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((f) => f.endsWith(".ts"));
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(join(ROOT, file), "utf8");
    } catch {
      continue; // deleted in the working tree
    }
    for (const m of text.matchAll(/class (\w+) extends (\w+)/g)) parents.set(m[1], m[2]);
  }
  const isStatebag = (name: string, seen = new Set<string>()): boolean =>
    name === "StatebagError" ||
    (!seen.has(name) && parents.has(name) && isStatebag(parents.get(name)!, seen.add(name)));
  return [...parents.keys()].filter((name) => isStatebag(name)).sort();
}

describe("every StatebagError carries a hint", () => {
  it("the audit: every subclass in the sources has a case here", () => {
    const missing = declaredSubclasses().filter((name) => !(name in cases));
    expect(missing, "add a case that triggers each of these and check its hint").toEqual([]);
  });

  for (const [name, trigger] of Object.entries(cases)) {
    it(`${name}: a non-empty hint`, async () => {
      const error = await trigger();
      expect(error).toBeInstanceOf(StatebagError);
      expect((error as Error).constructor.name).toBe(name);
      const hint = (error as StatebagError).hint;
      expect(typeof hint).toBe("string");
      expect(hint.trim().length).toBeGreaterThan(10);
      if (name in specificHints) expect(hint).toContain(specificHints[name]);
    });
  }

  it("the hint is a field, never part of the message: a thrower's own, else the code's general advice", () => {
    const own = new ConfigurationError("retries must be >= 0", "pass retries: 3");
    expect(own.hint).toBe("pass retries: 3");
    expect(own.message).toBe("retries must be >= 0");
    // toString shows both, the hint on its own line (what String(error) and template strings print).
    expect(String(own)).toBe("ConfigurationError: retries must be >= 0\n  hint: pass retries: 3");
    const general = new ConfigurationError("retries must be >= 0");
    expect(general.message).toBe("retries must be >= 0");
    expect(String(general)).toBe(`ConfigurationError: retries must be >= 0\n  hint: ${general.hint}`);
    expect(general.hint).toContain("correct the option or argument");
    expect(new ConfigurationError("x", "   ").hint).toBe(general.hint);
    expect(new StatebagError("json-too-deep", "too deep").hint).toContain("JSON input");
    expect(new StatebagError("unheard-of" as StatebagErrorCode, "x").hint).toContain("STATEBAG_DEBUG=1");
  });

  it("a migration error writes the value's place from data: messageAt(label), never a search of its text", () => {
    const registry = new TypeRegistry({
      migrations: [
        defineMigration({
          type: "acme.M",
          from: 1,
          to: 2,
          up: () => {
            throw new Error("boom at /stateBag/notes");
          },
        }),
      ],
    });
    registry.register({
      $type: "acme.M",
      version: 2,
      schema: { type: "object", properties: { n: { type: "number" } } },
    });
    let error: unknown;
    try {
      registry.upgrade({ $type: "acme.M", $version: 1 }, "/stateBag/notes");
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(MigrationError);
    const migration = error as MigrationError;
    expect(migration.message).toBe('migration of "acme.M" v1 -> v2 failed at /stateBag/notes: boom at /stateBag/notes');
    expect(migration.messageAt("/stateBag/…")).toBe(
      'migration of "acme.M" v1 -> v2 failed at /stateBag/…: boom at /stateBag/notes',
    );
    expect(migration.pointer).toBe("/stateBag/notes");
  });

  it("SessionValidationError says how to fix it, and each problem keeps its own hint", async () => {
    const error = (await cases.SessionValidationError()) as SessionValidationError;
    expect(error.hint).toContain("JSON pointers");
    expect(error.problems.length).toBeGreaterThan(0);
  });
});
