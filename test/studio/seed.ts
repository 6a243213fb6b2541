/**
 * A seeded store for the studio's tests: current, old-version, invalid and unknown-content
 * sessions, hostile ids, keys and texts, and enough plain ones to page through. Rows are written
 * through a codec that stores the given text as it is (so invalid and old documents can be stored).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { openStore } from "../../src/runtime/stores/open.js";
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
  ids: { current: string; old: string; invalid: string; hostile: string[]; bulk: string[] };
  cleanup(): void;
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
    texts.set(id, envelope(doc));
    await store.save({ id, stateBag: {} }, { expectedRevision: null, ...(meta ? { meta } : {}) });
  };
  const v1 = JSON.parse(readFileSync(join(REPO, "test/fixtures/InMemoryChatHistoryState/v1.json"), "utf8"));
  const ids = {
    current: "chat-ada",
    old: "chat-old-v1",
    invalid: "chat-invalid",
    hostile: HOSTILE_IDS,
    bulk: [] as string[],
  };
  await put(
    ids.current,
    {
      id: ids.current,
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 2,
          messages: chatMessages(),
          droppedMessageCount: 0,
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
        $version: 2,
        messages: broken,
        droppedMessageCount: 0,
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
            $version: 2,
            messages,
            droppedMessageCount: 0,
          },
          [`${HOSTILE.img}${HOSTILE.forged}`]: { $type: `x${HOSTILE.svg}`, $version: 1, note: HOSTILE.iframe },
        },
      },
      { owner: HOSTILE.img, title: HOSTILE.script },
    );
  }
  for (let i = 0; i < (options.bulk ?? 0); i++) {
    const id = `bulk-${String(i).padStart(3, "0")}`;
    ids.bulk.push(id);
    await put(id, {
      id,
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 2,
          messages: [{ role: "user", contents: [text(`hello ${i}`)] }],
          droppedMessageCount: 0,
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
