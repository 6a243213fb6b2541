/**
 * A seeded store for the studio's tests: current, old-version, invalid and unknown-content
 * sessions, hostile ids, keys and texts, outsized ones (a row nested 5,000 levels deep, a chat
 * text of 100,000 characters), and enough plain ones to page through. Rows are written through a
 * codec that stores the given text as it is (so invalid and old documents can be stored). Also the
 * helpers the studio's tests share: a command context and a raw HTTP request.
 */
import { request } from "node:http";
import { Readable } from "node:stream";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { CommandContext } from "../../src/cli/context.js";
import { Capture, EXIT, Output } from "../../src/cli/io.js";
import { findProjectConfig } from "../../src/cli/project-config.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import type { SessionCodec } from "../../src/runtime/stores/types.js";

const REPO = join(import.meta.dirname, "../..");

/** Markup, script and terminal payloads (the CLI's hostile strings, test/cli/hostile-output.test.ts, plus HTML ones). */
export const HOSTILE = {
  img: `<img src=x onerror="window.__pwned=1">`,
  script: `"><script>window.__pwned=1</script>`,
  svg: `<svg/onload=window.__pwned=1>`,
  iframe: `<iframe src="javascript:window.top.__pwned=1"></iframe>`,
  escapes: "\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202e",
  forged: "\n✔ forged.json: 1 session valid",
  long: "W".repeat(5000),
};

export const HOSTILE_IDS = [
  `id-${HOSTILE.img}`,
  `id-${HOSTILE.script}`,
  `id-${HOSTILE.svg}${HOSTILE.escapes}`,
  `id-${HOSTILE.long.slice(0, 300)}`,
];

const envelope = (session: unknown) => JSON.stringify({ format: "statebag.session", formatVersion: 1, session });
const text = (t: string) => ({ $type: "text", text: t });

function chatMessages() {
  return [
    { role: "system", contents: [text("You are a concise travel assistant.")] },
    { role: "user", authorName: "Ada", contents: [text("Will it rain in Lisbon tomorrow?")] },
    {
      role: "assistant",
      messageId: "m2",
      contents: [
        { $type: "reasoning", text: "Needs the forecast: call get_weather." },
        { $type: "functionCall", callId: "call_1", name: "get_weather", arguments: { city: "Lisbon" } },
      ],
    },
    {
      role: "tool",
      contents: [{ $type: "functionResult", callId: "call_1", result: { rain: 0.7, summary: "showers" } }],
    },
    {
      role: "assistant",
      contents: [
        text("Showers are likely. Shall I book a taxi?"),
        {
          $type: "toolApprovalRequest",
          requestId: "req_1",
          toolCall: { $type: "functionCall", callId: "call_2", name: "book_taxi", arguments: { when: "10:00" } },
        },
        { $type: "usage", details: { inputTokenCount: 40, outputTokenCount: 12, totalTokenCount: 52 } },
      ],
    },
  ];
}

export interface SeededStore {
  dir: string;
  url: string;
  ids: {
    current: string;
    old: string;
    invalid: string;
    hostile: string[];
    bulk: string[];
    /** A row nested 5,000 levels deep (about 30 KB): too deep to load, so invalid. */
    deep: string;
    /** A chat with a 100,000-character text and a pending approval whose request id is "toString". */
    long: string;
  };
  cleanup(): void;
}

/** The length of the chat text of `ids.long`. */
export const LONG_TEXT_LENGTH = 100_000;

/** `{"a":{"a":...}}`, `depth` levels, as JSON text (JSON.stringify would recurse as deep). */
function nestedJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}"bottom"${"}".repeat(depth)}`;
}

/** Writes the seeded SQLite store (and returns its URL) in a new temp folder. */
export async function seedStore(options: { bulk?: number } = {}): Promise<SeededStore> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-studio-"));
  const url = `sqlite:${join(dir, "sessions.db")}`;
  const texts = new Map<string, string>();
  const raw: SessionCodec = {
    serialize: (s: AgentSession) => texts.get(s.id)!,
    deserialize: (_text: string, key?: string) => ({ id: key ?? "", stateBag: {} }),
  };
  const store = await openStore(url, { codec: raw });
  const put = async (id: string, doc: unknown, meta?: { owner?: string; title?: string }) => {
    texts.set(id, typeof doc === "string" ? doc : envelope(doc));
    await store.save({ id, stateBag: {} }, { expectedRevision: null, ...(meta ? { meta } : {}) });
  };
  const v1 = JSON.parse(readFileSync(join(REPO, "test/fixtures/InMemoryChatHistoryState/v1.json"), "utf8"));
  const ids = {
    current: "chat-ada",
    old: "chat-old-v1",
    invalid: "chat-invalid",
    hostile: HOSTILE_IDS,
    bulk: [] as string[],
    deep: "deep-5000",
    long: "chat-long",
  };
  await put(
    ids.current,
    {
      id: ids.current,
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          messages: chatMessages(),
          droppedMessageCount: 0,
          branches: [],
          branchPoints: [],
        },
      },
    },
    { owner: "ada", title: "Lisbon trip" },
  );
  await put(
    ids.old,
    { id: ids.old, stateBag: { "statebag.chatHistory": v1 } },
    { owner: "ada", title: "Stored by v1" },
  );
  const broken = chatMessages();
  (broken[1] as { role: unknown }).role = 42;
  await put(ids.invalid, {
    id: ids.invalid,
    stateBag: {
      "statebag.chatHistory": {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: broken,
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      },
    },
  });
  for (const [i, id] of HOSTILE_IDS.entries()) {
    const hostileText = Object.values(HOSTILE).join(" | ");
    const messages = [
      {
        role: "user",
        authorName: HOSTILE.script,
        contents: [text(hostileText), { $type: `acme.${HOSTILE.img}`, payload: HOSTILE.svg }],
      },
      {
        role: `assistant${HOSTILE.img}`,
        contents: [
          {
            $type: "functionCall",
            callId: HOSTILE.iframe,
            name: HOSTILE.script,
            arguments: { [HOSTILE.img]: HOSTILE.long },
          },
        ],
      },
    ];
    await put(
      id,
      {
        id,
        stateBag: {
          [`key-${HOSTILE.script}${i}`]: {
            $type: "InMemoryChatHistoryState",
            $version: 3,
            messages,
            droppedMessageCount: 0,
            branches: [],
            branchPoints: [],
          },
          [`${HOSTILE.img}${HOSTILE.forged}`]: { $type: `x${HOSTILE.svg}`, $version: 1, note: HOSTILE.iframe },
        },
      },
      { owner: HOSTILE.img, title: HOSTILE.script },
    );
  }
  // The arguments placeholder replaced by the nested text: the stored row is about 30 KB.
  await put(
    ids.deep,
    envelope({
      id: ids.deep,
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          messages: [
            { role: "assistant", contents: [{ $type: "functionCall", callId: "c", name: "f", arguments: 0 }] },
          ],
          droppedMessageCount: 0,
          branches: [],
          branchPoints: [],
        },
      },
    }).replace('"arguments":0', `"arguments":${nestedJson(5000)}`),
  );
  await put(ids.long, {
    id: ids.long,
    stateBag: {
      "statebag.chatHistory": {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: [
          { role: "user", contents: [text("Summarise this.")] },
          {
            role: "assistant",
            contents: [
              text(`${"L".repeat(LONG_TEXT_LENGTH - 3)}END`),
              {
                $type: "toolApprovalRequest",
                requestId: "toString",
                toolCall: { $type: "functionCall", callId: "call_9", name: "send_mail", arguments: {} },
              },
            ],
          },
        ],
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      },
    },
  });
  for (let i = 0; i < (options.bulk ?? 0); i++) {
    const id = `bulk-${String(i).padStart(3, "0")}`;
    ids.bulk.push(id);
    await put(id, {
      id,
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          messages: [{ role: "user", contents: [text(`hello ${i}`)] }],
          droppedMessageCount: 0,
          branches: [],
          branchPoints: [],
        },
      },
    });
  }
  await store.close();
  return { dir, url, ids, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A project folder whose config points at the store, this repository's registry, schema history and fixtures. */
export function seedProject(dir: string, url: string): string {
  // Paths in a config are relative to its folder.
  const rel = (p: string) => relative(dir, join(REPO, p));
  writeFileSync(
    join(dir, "statebag.config.json"),
    JSON.stringify(
      {
        store: url,
        registry: rel("src/generated/registry.ts"),
        schemas: rel("schemas"),
        fixtures: rel("test/fixtures"),
      },
      null,
      2,
    ),
  );
  return dir;
}

/** A command context for `openStudio`, its project found from `cwd`. */
export function studioContext(cwd: string): CommandContext {
  const environment = {
    stdout: new Capture(false),
    stderr: new Capture(false),
    stdin: Readable.from([]),
    env: {},
    cwd,
  };
  return {
    environment,
    output: (o: { json?: boolean }) => new Output(environment, o.json === true),
    exit: () => EXIT.ok,
    project: () => findProjectConfig(cwd, undefined),
  } as unknown as CommandContext;
}

/** One HTTP request as sent (any method, Host and headers), the answer read whole. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; path?: string } = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: options.path ?? target.pathname + target.search,
        method: options.method ?? "GET",
        headers: options.headers,
      },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}
