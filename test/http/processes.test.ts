/**
 * Two chat server processes on one store (SQLite file, PostgreSQL schema, Redis prefix, Redis
 * Cluster prefix), each `createChatHandler` + `toNodeListener` on 127.0.0.1 in its own child
 * process (chat-server-process.ts): a turn started on A is followed on B from its first chunk to
 * its end; a stop sent to B stops the run on A and keeps the partial answer, marked; A killed with
 * SIGKILL mid-turn leaves a chat that B frees once A's lease passed, with the user's message and
 * the answer so far marked interrupted, and a new message works; the same for a turn on a chat
 * with a history, whose user message is only in the turn's stream until it commits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { available, postgresBackend, redisBackend, redisClusterBackend, sqliteBackend } from "../stores/helpers.js";
import { readReply, userTurn, waitFor } from "./setup.js";

const SCRIPT = fileURLToPath(new URL("./chat-server-process.ts", import.meta.url));
const backends = [sqliteBackend, postgresBackend(), redisBackend(), redisClusterBackend].filter(available);

interface Server {
  base: string;
  child: ChildProcess;
  stderr: () => string;
}

async function startServer(url: string): Promise<Server> {
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPT], {
    env: { ...process.env, STATEBAG_CHAT_STORE_URL: url, STATEBAG_CHAT_WORD_MS: "10", STATEBAG_CHAT_LEASE_MS: "1000" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      out += d;
      const match = /listening (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`chat server exited with ${code}: ${err}`)));
  });
  return { base: `http://127.0.0.1:${port}/api`, child, stderr: () => err };
}

async function stopServer(server: Server | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  server.child.kill("SIGTERM");
  await exited;
}

const headers = { "content-type": "application/json", "x-owner": "ada" };
const postTurn = (server: Server, body: unknown) =>
  fetch(`${server.base}/chat`, { method: "POST", headers, body: JSON.stringify(body) });
const getJson = async <T>(server: Server, path: string): Promise<T> => {
  const response = await fetch(`${server.base}${path}`, { headers });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
};

/** Reads an SSE response chunk by chunk into `chunks` (for waiting on progress mid-stream). */
function follow(response: Response): { chunks: Record<string, unknown>[]; done: Promise<void> } {
  const chunks: Record<string, unknown>[] = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const bytes of response.body!) {
      buffered += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = event.replace(/^data: /, "");
        if (data !== "[DONE]") chunks.push(JSON.parse(data) as Record<string, unknown>);
      }
    }
  })();
  return { chunks, done };
}

const textOf = (message: UIMessage) =>
  (message.parts as { type: string; text?: string }[])
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");

for (const backend of backends) {
  describe(`two chat server processes on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let hasStreams = false;
    let a: Server | undefined;
    let b: Server | undefined;
    let url = "";

    beforeAll(async () => {
      const location = await backend.location();
      cleanup = location.cleanup;
      url = location.url;
      const probe = await openStore(location.url);
      hasStreams = probe.streams !== undefined;
      await probe.close();
      if (!hasStreams) return;
      [a, b] = await Promise.all([startServer(location.url), startServer(location.url)]);
    }, 60_000);
    afterAll(async () => {
      await Promise.all([stopServer(a), stopServer(b)]);
      await cleanup();
    });

    const test = (name: string, body: (a: Server, b: Server) => Promise<void>) =>
      it(name, async () => {
        expect(hasStreams).toBe(true); // every built-in store has a stream buffer
        // A test that killed A leaves the next one a new A on the same store.
        if (a!.child.exitCode !== null || a!.child.signalCode !== null) a = await startServer(url);
        await body(a!, b!);
      }, 60_000);

    test("a turn started on A is followed on B from its first chunk to its end", async (a, b) => {
      const started = await postTurn(a, userTurn("proc-resume", "Tell me a story", "m-proc-resume"));
      expect(started.status).toBe(200);
      const direct = readReply(started);
      const resumed = await fetch(`${b.base}/chat/proc-resume/stream`, { headers });
      expect(resumed.status).toBe(200);
      // The chat is busy for B too while A writes.
      const busy = await postTurn(b, userTurn("proc-resume", "me too", "m-proc-resume-2"));
      expect(busy.status).toBe(409);
      expect(((await busy.json()) as { type: string }).type).toBe("urn:statebag:problem:chat-busy");
      const [original, replayed] = await Promise.all([direct, readReply(resumed)]);
      expect(replayed.errors).toEqual([]);
      expect(replayed.chunks).toEqual(original.chunks);
      expect(textOf(replayed.message)).toContain("word399");
      const chat = await getJson<UIMessage[]>(b, "/chats/proc-resume");
      expect(chat.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(chat[1].id).toBe(original.message.id);
      expect((await fetch(`${b.base}/chat/proc-resume/stream`, { headers })).status).toBe(204);
    });

    test("a stop sent to B stops the run on A and keeps the partial answer, marked stopped", async (a, b) => {
      const reading = follow(await postTurn(a, userTurn("proc-stop", "Tell me a story", "m-proc-stop")));
      await waitFor(async () => (reading.chunks.some((c) => c.type === "text-delta") ? true : undefined));
      const stopped = await fetch(`${b.base}/chat/proc-stop/stop`, { method: "POST", headers });
      expect(stopped.status).toBe(200);
      const body = (await stopped.json()) as { stopped: boolean; committed: boolean; kept: UIMessage };
      expect(body).toMatchObject({ stopped: true, committed: true });
      expect(textOf(body.kept)).toMatch(/^word0 /);
      expect(textOf(body.kept)).not.toContain("word399");
      await reading.done;
      expect(reading.chunks.at(-1)).toMatchObject({
        type: "finish",
        messageMetadata: { statebag: { finish: "stopped" } },
      });
      const chat = await getJson<UIMessage[]>(a, "/chats/proc-stop");
      expect(chat[1].metadata).toEqual({ statebag: { finish: "stopped" } });
      expect(textOf(chat[1])).toBe(textOf(body.kept));
      const next = await postTurn(b, userTurn("proc-stop", "hello", "m-proc-stop-2"));
      expect(next.status).toBe(200);
      await readReply(next);
      expect((await getJson<UIMessage[]>(a, "/chats/proc-stop")).map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
      ]);
    });

    test("A killed mid-turn (SIGKILL): after its lease B shows the user's message and the answer so far, marked interrupted, and takes a new message", async (a, b) => {
      const reading = follow(await postTurn(a, userTurn("proc-kill", "Tell me a story", "m-proc-kill")));
      await waitFor(async () => (reading.chunks.filter((c) => c.type === "text-delta").length > 3 ? true : undefined));
      const watching = follow(await fetch(`${b.base}/chat/proc-kill/stream`, { headers }));
      await waitFor(async () => (watching.chunks.some((c) => c.type === "text-delta") ? true : undefined));
      a.child.kill("SIGKILL");
      await reading.done.catch(() => undefined);
      // B's follower ends once the lease passed, and says so.
      await watching.done;
      expect(watching.chunks[0]).toMatchObject({ type: "start" });
      expect(watching.chunks.at(-1)).toMatchObject({ type: "error" });
      const chat = await waitFor(async () => {
        const c = await getJson<UIMessage[]>(b, "/chats/proc-kill");
        return c.length === 2 ? c : undefined;
      });
      expect(chat[0]).toMatchObject({ id: "m-proc-kill", role: "user" });
      expect(chat[1].metadata).toEqual({ statebag: { finish: "interrupted" } });
      expect(textOf(chat[1])).toMatch(/^word0 word1 word2/);
      const next = await postTurn(b, userTurn("proc-kill", "still there?", "m-proc-kill-2"));
      expect(next.status).toBe(200);
      await readReply(next);
      expect((await getJson<UIMessage[]>(b, "/chats/proc-kill")).map((m) => m.id).slice(2, 3)).toEqual([
        "m-proc-kill-2",
      ]);
    });

    test("A killed mid-turn on a chat that has a history (the message only in the turn's stream): B shows it at once, folds it in with the answer so far after the lease", async (a, b) => {
      const first = await postTurn(a, userTurn("proc-kill2", "Hello", "m-proc-kill2-1"));
      expect(first.status).toBe(200);
      await readReply(first);
      const reading = follow(await postTurn(a, userTurn("proc-kill2", "Tell me a story", "m-proc-kill2-2")));
      await waitFor(async () => (reading.chunks.filter((c) => c.type === "text-delta").length > 3 ? true : undefined));
      // While A writes, B's reader shows what the user typed (kept in the turn's stream, not yet in the chat).
      expect((await getJson<UIMessage[]>(b, "/chats/proc-kill2")).map((m) => m.id)).toContain("m-proc-kill2-2");
      const watching = follow(await fetch(`${b.base}/chat/proc-kill2/stream`, { headers }));
      await waitFor(async () => (watching.chunks.some((c) => c.type === "text-delta") ? true : undefined));
      a.child.kill("SIGKILL");
      await reading.done.catch(() => undefined);
      await watching.done;
      // The replay starts at the answer: the stream's record of the message is the server's own.
      expect(watching.chunks[0]).toMatchObject({ type: "start" });
      expect(watching.chunks.at(-1)).toMatchObject({ type: "error" });
      const chat = await waitFor(async () => {
        const c = await getJson<UIMessage[]>(b, "/chats/proc-kill2");
        return c.length === 4 && c[3].metadata !== undefined ? c : undefined;
      });
      expect(chat[2]).toMatchObject({ id: "m-proc-kill2-2", role: "user" });
      expect(chat[3].metadata).toEqual({ statebag: { finish: "interrupted" } });
      expect(textOf(chat[3])).toMatch(/^word0 word1 word2/);
      const next = await postTurn(b, userTurn("proc-kill2", "still there?", "m-proc-kill2-3"));
      expect(next.status).toBe(200);
      await readReply(next);
      const ids = (await getJson<UIMessage[]>(b, "/chats/proc-kill2")).map((m) => m.id);
      expect(ids.filter((id) => id === "m-proc-kill2-2")).toHaveLength(1);
      expect(ids.slice(4, 5)).toEqual(["m-proc-kill2-3"]);
    });
  });
}
