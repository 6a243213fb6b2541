/**
 * `npm run demo`: a session that survives a restart.
 *
 *   1. An agent with in-memory history, the rolling-summary context provider and a custom
 *      "user profile" provider (examples/providers/) talks three turns with the offline
 *      ScriptedChatClient; the session is saved to SQLite (./.statebag/sessions.db).
 *   2. A fresh agent (new client, new providers: as after a restart) loads the session by id and
 *      continues: it still knows the user's name and unit preference.
 *   3. The stored document is printed, and validated against the registry.
 *
 * Offline and deterministic apart from ids and timestamps. Set STATEBAG_STORE to use another store
 * (e.g. postgres://postgres@127.0.0.1/postgres).
 *
 * With OPENAI_API_KEY set it talks to a real model instead (OpenAIChatClient, Chat Completions;
 * STATEBAG_MODEL picks the model, default gpt-4.1-mini). STATEBAG_MODEL may also name an
 * OpenAI-compatible server, `<baseURL>#<model>` (e.g. http://127.0.0.1:11434/v1#llama3.2 for Ollama).
 */
import { createColors } from "picocolors";
import { messageText, serializeSession, StatebagError, validateSession, type ChatMessage } from "statebag";
import {
  ChatClientAgent,
  InMemoryChatHistoryProvider,
  RollingSummaryProvider,
  type AgentResponse,
  type AITool,
  type ChatClient,
} from "statebag/agent";
import { OpenAIChatClient } from "statebag/openai";
import { openStore, withSession, type SessionStore } from "statebag/stores";
import { ScriptedChatClient } from "statebag/testing";
import { ensureExampleTypes } from "./providers/register.js";
import { unitFromInstructions, UserProfileProvider } from "./providers/user-profile.js";

const c = createColors(process.stdout.isTTY === true && !process.env.NO_COLOR);
const say = (text = "") => process.stdout.write(text + "\n");
const heading = (n: number, text: string) => say(`\n${c.bold(c.cyan(`${n}.`))} ${c.bold(text)}`);

/** A tool the model can call. Offline: the "forecast" is made up from the city's name. */
const weatherTool: AITool = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" }, unit: { enum: ["celsius", "fahrenheit"] } },
    required: ["city"],
  },
  execute: ({ city, unit }) => {
    const celsius = 12 + ((String(city).length * 7) % 15);
    return {
      city,
      unit: unit ?? "fahrenheit",
      temperature: unit === "celsius" ? celsius : Math.round(celsius * 1.8 + 32),
      conditions: "sunny",
    };
  },
};

/** A real model when the environment names one (OPENAI_API_KEY, or STATEBAG_MODEL with a baseURL), else undefined. */
function realModel(env: NodeJS.ProcessEnv = process.env): OpenAIChatClient | undefined {
  const spec = env.STATEBAG_MODEL?.trim();
  if (spec && /^https?:\/\//.test(spec)) {
    const [baseURL, model] = spec.split("#");
    return new OpenAIChatClient({
      baseURL,
      model: model || "llama3.2",
      apiKey: env.OPENAI_API_KEY || "not-needed",
      providerName: "openai-compatible",
    });
  }
  if (env.OPENAI_API_KEY)
    return new OpenAIChatClient({
      model: spec || "gpt-4.1-mini",
      apiKey: env.OPENAI_API_KEY,
      baseURL: env.OPENAI_BASE_URL || undefined,
    });
  return undefined;
}

/**
 * Everything that is behaviour: the chat client, the providers, the agent. A restart builds all
 * of it again; only the session (pure JSON) carries over.
 */
function buildAgent(): ChatClientAgent {
  const real = realModel();
  const client: ChatClient =
    real ??
    new ScriptedChatClient({
      rules: [
        {
          when: /\bprefer\b/i,
          reply: (ctx) => `Noted, I will use ${/celsius/i.test(ctx.text) ? "celsius" : "fahrenheit"} from now on.`,
        },
        {
          when: /\bweather in (\w+)/i,
          reply: (ctx) => ({
            toolCall: {
              name: "get_weather",
              // The unit comes from the user profile provider's instructions: its state, not the history.
              arguments: {
                city: /\bweather in (\w+)/i.exec(ctx.text)![1],
                unit: unitFromInstructions(ctx.instructions) ?? "fahrenheit",
              },
            },
          }),
        },
      ],
    });
  // A "small model" that writes the rolling summary: offline, what the user said, most recent last.
  const summarizer: ChatClient =
    real ??
    new ScriptedChatClient({
      usage: false,
      rules: [
        {
          when: /^summari[sz]e/i,
          reply: (ctx) => `The user said: ${[...ctx.text.matchAll(/^user: (.+)$/gm)].map((m) => m[1]).join(" / ")}`,
        },
      ],
    });
  return new ChatClientAgent({
    client,
    name: "demo",
    instructions: "You are a concise, friendly assistant.",
    history: new InMemoryChatHistoryProvider(),
    contextProviders: [new RollingSummaryProvider({ summarizer, maxMessages: 6 }), new UserProfileProvider()],
    tools: [weatherTool],
  });
}

function printTurn(input: string, response: AgentResponse): void {
  say(`   ${c.dim("you:  ")} ${input}`);
  for (const message of response.messages) {
    for (const content of message.contents) {
      if (content.$type === "functionCall")
        say(`   ${c.dim("agent:")} ${c.magenta(`[calls ${content.name} ${JSON.stringify(content.arguments ?? {})}]`)}`);
      if (content.$type === "functionResult") say(`   ${c.dim("tool: ")} ${c.magenta(JSON.stringify(content.result))}`);
    }
    const text = messageText(message);
    if (message.role === "assistant" && text) say(`   ${c.dim("agent:")} ${c.green(text)}`);
  }
}

/** Runs one turn on the stored session: load, run, save with compare-and-swap. */
async function turn(store: SessionStore, agent: ChatClientAgent, id: string, input: string): Promise<number> {
  const { value, revision } = await withSession(store, id, (session) => agent.run(input, session));
  printTurn(input, value);
  return revision;
}

/** Pretty JSON with each chat message on one line: the stored document, readable. */
function readableJson(value: unknown, indent = ""): string {
  const next = indent + "  ";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const oneLine = (v: unknown) => typeof v === "object" && v !== null && "role" in v && "contents" in v;
    return `[\n${value.map((v) => next + (oneLine(v) ? JSON.stringify(v) : readableJson(v, next))).join(",\n")}\n${indent}]`;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    return `{\n${entries.map(([k, v]) => `${next}${JSON.stringify(k)}: ${readableJson(v, next)}`).join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}

async function main(): Promise<void> {
  const registered = ensureExampleTypes();
  const store = await openStore(process.env.STATEBAG_STORE || undefined);
  await store.setup();
  say(c.bold("statebag demo: an agent session that survives a restart"));
  say(c.dim(`store: ${store.url}`));
  const real = realModel();
  say(
    c.dim(
      real
        ? `model: ${real.metadata.providerName} ${real.model}`
        : "model: offline ScriptedChatClient (set OPENAI_API_KEY or STATEBAG_MODEL for a real one)",
    ),
  );

  // ---- 1. First process: three turns.
  heading(1, "An agent with in-memory history, a rolling summary and a custom user-profile provider");
  const agent = buildAgent();
  const id = agent.createSession().id;
  say(c.dim(`   session ${id}`));
  await turn(store, agent, id, "Hi! My name is Ada.");
  await turn(store, agent, id, "I prefer celsius, please.");
  let revision = await turn(store, agent, id, "What's the weather in Lisbon?");
  say(c.dim(`   saved: revision ${revision}`));

  // ---- 2. "Restart": nothing survives but the stored session.
  heading(2, "Restart: a fresh agent instance loads the session by id and continues");
  const restarted = buildAgent();
  await turn(store, restarted, id, "What is my name?");
  revision = await turn(store, restarted, id, "And the weather in Oslo?");
  say(c.dim(`   saved: revision ${revision}`));

  // ---- 3. What is stored.
  const stored = await store.get(id);
  if (!stored) throw new Error(`session ${id} vanished from ${store.url}`);
  heading(3, `The stored session (revision ${stored.revision}), one message per line`);
  const document = JSON.parse(serializeSession(stored.session));
  say(readableJson(document).replace(/^/gm, "   "));

  // ---- 4. Validation.
  heading(4, "Validation against the registry");
  const result = validateSession(stored.session, { strict: true });
  if (result.ok) {
    say(`   ${c.green("✔ valid")} (strict: every $type known, every value checked against its schema)`);
    for (const [key, value] of Object.entries(stored.session.stateBag)) {
      const messages = Array.isArray((value as { messages?: unknown }).messages)
        ? ` (${(value as unknown as { messages: ChatMessage[] }).messages.length} messages)`
        : "";
      say(`     ${key}: ${value.$type} v${value.$version ?? 1}${messages}`);
    }
  } else {
    say(`   ${c.red("✖ invalid")}`);
    for (const p of result.problems) say(`     ${p.pointer}: ${p.message}`);
    process.exitCode = 1;
  }
  say(
    c.dim(
      `   example.UserProfileState came from ${registered === "generated" ? "the generated registry (npm run gen)" : "a runtime registration (examples/providers/register.ts)"}`,
    ),
  );

  await store.close();
  const flags = `${process.env.STATEBAG_STORE ? ` --store ${process.env.STATEBAG_STORE}` : ""}${registered === "runtime" ? " --registry examples/providers/register.ts" : ""}`;
  say(
    `\n${c.dim(`done in ${process.uptime().toFixed(1)} s. Look at it again with:`)} npx statebag inspect ${id}${flags}`,
  );
}

main().catch((error: unknown) => {
  const hint = error instanceof StatebagError ? `\n  ${c.dim("hint:")} ${error.hint}` : "";
  process.stderr.write(`${c.red("demo failed:")} ${error instanceof Error ? error.message : String(error)}${hint}\n`);
  if (process.env.STATEBAG_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  process.exitCode = 1;
});
