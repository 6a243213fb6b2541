/**
 * `statebag import --from openai-agents <file...> --store <url>`: each file (a JSON array of Agents
 * SDK items, or a RunState's text) becomes one statebag session (id: `--id` for one file, else the
 * file name), the session a `StatebagSession` with that id reads (runtime/openai-agents/import.ts).
 * Create-if-absent per session, so a re-run after an interruption imports only what is missing;
 * `--dry-run` converts and reports without writing. The report (also `--json`) lists per file what
 * was imported, and the losses: what had no statebag field and how it was kept.
 */
import { basename, extname } from "node:path";
import { inputPath, messageOf, type CommandContext } from "./context.js";
import { CliError, EXIT, echo, type ExitCode } from "./io.js";
import { readDocumentFile, readStdinBytes } from "./read-document.js";
import { cliKeyring, openCliStore } from "./store.js";
import type { OpenAIAgentsImportLoss } from "../runtime/openai-agents/import.js";

export interface OpenAIAgentsImportOptions {
  id?: string;
  store?: string;
  save?: boolean;
  dryRun?: boolean;
  json?: boolean;
  keyring?: string;
  maxBytes?: number;
}

interface FileResult {
  file: string;
  session: string;
  source?: "items" | "run-state";
  items: number;
  pendingApprovals: number;
  outcome: "imported" | "would import" | "exists" | "failed";
  error?: string;
}

const EXAMPLE = "statebag import --from openai-agents history.json --store sqlite:./sessions.db --dry-run --json";

export async function importOpenAIAgents(
  context: CommandContext,
  inputs: string[],
  options: OpenAIAgentsImportOptions,
): Promise<ExitCode> {
  if (options.id !== undefined && inputs.length !== 1)
    throw new CliError(EXIT.usage, `--id names one session, but ${inputs.length} inputs were given`, {
      fix: "import one file per --id, or leave --id out (each session is named after its file)",
    });
  const { importOpenAIAgentsHistory } = await import("../runtime/openai-agents/import.js");
  const { parseJson } = await import("../runtime/json/safe-json.js");
  const { checkId } = await import("../runtime/stores/common.js");
  const out = context.output(options);
  const opened = await openCliStore(options.store, context.environment, {
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const results: FileResult[] = [];
  const losses = new Map<string, OpenAIAgentsImportLoss & { files: number }>();
  try {
    for (const input of inputs) {
      const id = options.id ?? (input === "-" ? undefined : basename(input, extname(input)));
      const result: FileResult = {
        file: input === "-" ? "(stdin)" : input,
        session: id ?? "",
        items: 0,
        pendingApprovals: 0,
        outcome: "failed",
      };
      results.push(result);
      try {
        if (id === undefined)
          throw new CliError(EXIT.usage, "a history read from stdin needs --id <session id>", { fix: EXAMPLE });
        checkId(id, "session id");
        const bytes =
          input === "-"
            ? await readStdinBytes(context.environment.stdin, options.maxBytes)
            : await readDocumentFile(inputPath(input, context.environment), input, options.maxBytes);
        const value = parseJson(bytes, options.maxBytes === undefined ? undefined : { maxBytes: options.maxBytes });
        const converted = importOpenAIAgentsHistory(value, { id, runStateText: bytes.toString("utf8") });
        result.source = converted.source;
        result.items = converted.items;
        result.pendingApprovals = converted.pendingApprovals;
        for (const loss of converted.losses) {
          const found = losses.get(loss.what);
          if (found) {
            found.count += loss.count;
            found.files += 1;
          } else losses.set(loss.what, { ...loss, files: 1 });
        }
        if (await opened.store.get(id)) result.outcome = "exists";
        else if (options.dryRun) result.outcome = "would import";
        else {
          try {
            await opened.store.save(converted.session, { expectedRevision: null });
            result.outcome = "imported";
          } catch (error) {
            // Saved by another run meanwhile: already there, nothing overwritten.
            if ((error as { code?: string }).code !== "conflict") throw error;
            result.outcome = "exists";
          }
        }
      } catch (error) {
        if (error instanceof CliError && error.exitCode === EXIT.usage) throw error;
        result.error = messageOf(error);
      }
    }
  } finally {
    await opened.close();
  }
  const count = (o: FileResult["outcome"]) => results.filter((r) => r.outcome === o).length;
  const failed = count("failed");
  const report = {
    ok: failed === 0,
    source: "openai-agents",
    dryRun: options.dryRun === true,
    store: opened.url,
    files: results.length,
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
      `${results.length} file${results.length === 1 ? "" : "s"} read: ` +
        (options.dryRun ? `${report.wouldImport} would be imported` : `${report.imported} imported`) +
        `, ${report.exists} already in the store, ${failed} failed`,
    );
    for (const result of results)
      out.line(
        `  ${echo(result.file)} -> ${echo(result.session)}: ${result.outcome}` +
          (result.outcome === "failed"
            ? ` (${result.error})`
            : `, ${result.items} items from ${result.source === "run-state" ? "a RunState" : "an items array"}` +
              (result.pendingApprovals ? `, ${result.pendingApprovals} waiting for approval` : "")),
      );
    if (report.losses.length) {
      out.line("what had no statebag field, and how it was kept:");
      for (const loss of report.losses)
        out.line(`  ${loss.what} (${loss.count}x in ${loss.files} file${loss.files === 1 ? "" : "s"}): ${loss.kept}`);
    } else out.line("nothing lost: every item has a statebag field");
  }
  return failed === 0 ? EXIT.ok : EXIT.failed;
}
