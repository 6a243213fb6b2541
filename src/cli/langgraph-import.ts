/**
 * `statebag import --from langgraph-sqlite <file.db>` / `--from langgraph-postgres <postgres-url>`:
 * reads the tables LangGraph JS's own savers write (SqliteSaver: `checkpoints`, `writes`;
 * PostgresSaver: `checkpoints`, `checkpoint_blobs`, `checkpoint_writes`, in `?schema=` or public)
 * and imports each thread's latest root checkpoint's messages into a statebag session (id = thread
 * id) in the store. The source is only read. Create-if-absent per thread, so a re-run (after an
 * interruption) imports only what is missing; `--dry-run` converts and reports without writing.
 * The report (also `--json`) lists per thread what was imported, and the losses: what had no
 * statebag field and how it was kept (runtime/langgraph/import.ts).
 */
import { stat } from "node:fs/promises";
import { inputPath, messageOf, type CommandContext } from "./context.js";
import { CliError, EXIT, echo, type ExitCode } from "./io.js";
import { cliKeyring, openCliStore } from "./store.js";
import type { JsonValue } from "../runtime/core/tagged.js";
import type { ImportLoss, SourceThread } from "../runtime/langgraph/import.js";
import type { LangGraphSource } from "./langgraph-sources.js";

export interface LangGraphImportOptions {
  from?: string;
  store?: string;
  save?: boolean;
  dryRun?: boolean;
  json?: boolean;
  keyring?: string;
  historyKey?: string;
}

interface ThreadResult {
  thread: string;
  checkpoint: string;
  messages: number;
  outcome: "imported" | "would import" | "exists" | "failed";
  error?: string;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** A stored serializer value as JSON (type "json") or base64 (anything else, or undecodable). */
function readValue(type: string, raw: unknown): { json?: JsonValue; base64?: string } {
  const bytes =
    typeof raw === "string" ? new TextEncoder().encode(raw) : raw instanceof Uint8Array ? raw : new Uint8Array();
  if (type === "json") {
    try {
      return { json: JSON.parse(decoder.decode(bytes)) as JsonValue };
    } catch {
      // Not UTF-8 JSON after all: kept as bytes.
    }
  }
  return { base64: Buffer.from(bytes).toString("base64") };
}

type Row = Record<string, unknown>;

/** The threads of a SqliteSaver file, one latest root checkpoint each (read-only). */
async function* sqliteThreads(path: string): AsyncGenerator<SourceThread> {
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Row[];
    const names = new Set(tables.map((t) => t.name));
    if (!names.has("checkpoints"))
      throw new CliError(EXIT.failed, "this SQLite file has no LangGraph checkpoints table", {
        where: path,
        fix: "give the file SqliteSaver.fromConnString(...) wrote to",
      });
    const writes = names.has("writes");
    // One pass over the root namespace's latest checkpoints (primary-key lookups per thread).
    const rows = db
      .prepare(
        `SELECT c.thread_id, c.checkpoint_id, c.type, c.checkpoint, c.metadata,
           (SELECT COUNT(*) FROM checkpoints x WHERE x.thread_id = c.thread_id) AS total,
           (SELECT COUNT(DISTINCT x.checkpoint_ns) FROM checkpoints x WHERE x.thread_id = c.thread_id AND x.checkpoint_ns <> '') AS namespaces,
           ${writes ? "(SELECT COUNT(*) FROM writes w WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = c.checkpoint_id)" : "0"} AS pending
         FROM checkpoints c
         WHERE c.checkpoint_ns = '' AND c.checkpoint_id = (SELECT MAX(m.checkpoint_id) FROM checkpoints m WHERE m.thread_id = c.thread_id AND m.checkpoint_ns = '')
         ORDER BY c.thread_id`,
      )
      .iterate() as Iterable<Row>;
    for (const row of rows) {
      const type = String(row.type ?? "json");
      const checkpoint = readValue(type, row.checkpoint).json;
      const values = (checkpoint as { channel_values?: Record<string, JsonValue> } | undefined)?.channel_values ?? {};
      yield {
        threadId: String(row.thread_id),
        checkpointId: String(row.checkpoint_id),
        // SqliteSaver keeps channel values inside the checkpoint, already as the serializer's JSON.
        channels: Object.entries(values).map(([channel, json]) => ({ channel, type: "json", json })),
        metadata: readValue(type, row.metadata).json,
        checkpoints: Number(row.total),
        namespaces: Number(row.namespaces),
        pendingWrites: Number(row.pending),
      };
    }
  } finally {
    db.close();
  }
}

/** The threads of a PostgresSaver schema, one latest root checkpoint each (read-only queries). */
async function* postgresThreads(url: string): AsyncGenerator<SourceThread> {
  const { importOptional, importPackage } = await import("../runtime/core/optional-dependency.js");
  const pg = await importOptional("pg", "statebag import --from langgraph-postgres", () =>
    importPackage<{ default: { Client: new (o: { connectionString: string }) => PgClient } }>("pg"),
  );
  const connection = new URL(url);
  const schema = connection.searchParams.get("schema") ?? "public";
  connection.searchParams.delete("schema");
  const client = new pg.default.Client({ connectionString: connection.toString() });
  await client.connect();
  const qualified = (name: string) => `"${schema.replace(/"/g, '""')}"."${name}"`;
  try {
    const found = await client.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes')",
      [schema],
    );
    if (found.rows.length < 3)
      throw new CliError(EXIT.failed, `schema ${echo(schema)} has no LangGraph PostgresSaver tables`, {
        where: "the --from langgraph-postgres URL",
        fix: "add ?schema=<schema> when PostgresSaver.fromConnString(url, { schema }) named one",
      });
    const { rows } = await client.query(
      `SELECT c.thread_id, c.checkpoint_id, c.checkpoint, c.metadata,
         (SELECT COUNT(*) FROM ${qualified("checkpoints")} x WHERE x.thread_id = c.thread_id) AS total,
         (SELECT COUNT(DISTINCT x.checkpoint_ns) FROM ${qualified("checkpoints")} x WHERE x.thread_id = c.thread_id AND x.checkpoint_ns <> '') AS namespaces,
         (SELECT COUNT(*) FROM ${qualified("checkpoint_writes")} w WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = c.checkpoint_id) AS pending
       FROM ${qualified("checkpoints")} c
       WHERE c.checkpoint_ns = '' AND c.checkpoint_id = (SELECT MAX(m.checkpoint_id) FROM ${qualified("checkpoints")} m WHERE m.thread_id = c.thread_id AND m.checkpoint_ns = '')
       ORDER BY c.thread_id`,
    );
    for (const row of rows) {
      const checkpoint = (row.checkpoint ?? {}) as {
        channel_versions?: Record<string, unknown>;
        channel_values?: Record<string, JsonValue>;
      };
      const channels: SourceThread["channels"] = [];
      // Older PostgresSaver versions kept plain values inline; blobs hold the rest, by channel version.
      for (const [channel, json] of Object.entries(checkpoint.channel_values ?? {}))
        channels.push({ channel, type: "json", json });
      const blobs = await client.query(
        `SELECT b.channel, b.type, b.blob FROM ${qualified("checkpoint_blobs")} b
         JOIN jsonb_each_text($2::jsonb) v ON v.key = b.channel AND v.value = b.version
         WHERE b.thread_id = $1 AND b.checkpoint_ns = '' AND b.type <> 'empty'`,
        [row.thread_id, JSON.stringify(checkpoint.channel_versions ?? {})],
      );
      for (const blob of blobs.rows)
        channels.push({
          channel: String(blob.channel),
          type: String(blob.type),
          ...readValue(String(blob.type), blob.blob),
        });
      yield {
        threadId: String(row.thread_id),
        checkpointId: String(row.checkpoint_id),
        channels,
        metadata: row.metadata as JsonValue,
        checkpoints: Number(row.total),
        namespaces: Number(row.namespaces),
        pendingWrites: Number(row.pending),
      };
    }
  } finally {
    await client.end();
  }
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  end(): Promise<void>;
}

export async function importLangGraph(
  context: CommandContext,
  inputs: string[],
  options: LangGraphImportOptions,
): Promise<ExitCode> {
  const source = options.from as LangGraphSource;
  const example =
    source === "langgraph-sqlite"
      ? "statebag import --from langgraph-sqlite ./checkpoints.db --store sqlite:./sessions.db"
      : "statebag import --from langgraph-postgres 'postgres://app@db/app?schema=public' --store postgres://app@db/app";
  if (inputs.length !== 1)
    throw new CliError(
      EXIT.usage,
      `--from ${source} reads one ${source === "langgraph-sqlite" ? "SQLite file" : "PostgreSQL URL"}, got ${inputs.length} inputs`,
      { fix: example },
    );
  const input = inputs[0];
  let threads: AsyncGenerator<SourceThread>;
  if (source === "langgraph-sqlite") {
    const path = inputPath(input, context.environment);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile())
      throw new CliError(EXIT.usage, `cannot read ${echo(input)}: no such file`, { where: path, fix: example });
    threads = sqliteThreads(path);
  } else {
    if (!/^postgres(ql)?:\/\//i.test(input))
      throw new CliError(EXIT.usage, "--from langgraph-postgres reads a postgres:// URL", { fix: example });
    threads = postgresThreads(input);
  }
  const { convertThread } = await import("../runtime/langgraph/import.js");
  const { checkId } = await import("../runtime/stores/common.js");
  const out = context.output(options);
  const opened = await openCliStore(options.store, context.environment, {
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const results: ThreadResult[] = [];
  const losses = new Map<string, ImportLoss & { threads: number }>();
  try {
    for await (const thread of threads) {
      const result: ThreadResult = {
        thread: thread.threadId,
        checkpoint: thread.checkpointId,
        messages: 0,
        outcome: "failed",
      };
      results.push(result);
      try {
        checkId(thread.threadId, "thread id");
        const converted = convertThread(thread, {
          id: thread.threadId,
          ...(options.historyKey !== undefined ? { historyKey: options.historyKey } : {}),
        });
        result.messages = converted.messages;
        for (const loss of converted.losses) {
          const found = losses.get(loss.what);
          if (found) {
            found.count += loss.count;
            found.threads += 1;
          } else losses.set(loss.what, { ...loss, threads: 1 });
        }
        if (await opened.store.get(thread.threadId)) result.outcome = "exists";
        else if (options.dryRun) result.outcome = "would import";
        else {
          try {
            await opened.store.save(converted.session, {
              expectedRevision: null,
              ...(converted.owner !== undefined ? { meta: { owner: converted.owner } } : {}),
            });
            result.outcome = "imported";
          } catch (error) {
            // Saved by another run meanwhile: already there, nothing overwritten.
            if ((error as { code?: string }).code !== "conflict") throw error;
            result.outcome = "exists";
          }
        }
      } catch (error) {
        if (error instanceof CliError) throw error;
        result.error = messageOf(error);
      }
    }
  } finally {
    await opened.close();
  }
  const count = (o: ThreadResult["outcome"]) => results.filter((r) => r.outcome === o).length;
  const failed = count("failed");
  const report = {
    ok: failed === 0,
    source,
    dryRun: options.dryRun === true,
    store: opened.url,
    threads: results.length,
    imported: count("imported"),
    wouldImport: count("would import"),
    exists: count("exists"),
    failed,
    losses: [...losses.values()],
    results,
  };
  if (options.json) out.result(report);
  else {
    out.line(
      `${results.length} thread${results.length === 1 ? "" : "s"} read from ${source}: ` +
        (options.dryRun ? `${report.wouldImport} would be imported` : `${report.imported} imported`) +
        `, ${report.exists} already in the store, ${failed} failed`,
    );
    for (const result of results)
      out.line(
        `  ${echo(result.thread)}: ${result.outcome}${result.outcome === "failed" ? ` (${result.error})` : `, ${result.messages} messages`}`,
      );
    if (report.losses.length) {
      out.line("what had no statebag field, and how it was kept:");
      for (const loss of report.losses)
        out.line(
          `  ${loss.what} (${loss.count}x in ${loss.threads} thread${loss.threads === 1 ? "" : "s"}): ${loss.kept}`,
        );
    } else out.line("nothing lost: every value has a statebag field");
  }
  return failed === 0 ? EXIT.ok : EXIT.failed;
}
