/**
 * `statebag chats upgrade [--apply]`: moves the chats statebag 0.1.0's chat server (`statebag/http`)
 * wrote to the layout the chat server uses now.
 *
 * 0.1.0 kept each chat under `<prefix>/<owner>/<chat id>` (both escaped: `%` -> `%25`, `/` -> `%2F`),
 * with no `meta.owner`, and one index document per owner, `<prefix>-index/<owner>`, listing the
 * owner's chats with their titles. Now a chat is an owned session under `<prefix>/<chat id>` with
 * `meta: { owner, title, labels: { "statebag.type": "chat" } }`, and there is no index: erasure,
 * retention and listing by owner find chats as they find every session.
 *
 * Each chat is moved by a create-if-absent save of the new row, then a compare-and-swap delete of the
 * old one. A run that stops between the two (a crash, Ctrl-C) is finished by the next: a new row of
 * the same owner holding the old chat's history (or a continuation of it) is recognised as the copy,
 * and only the old row is deleted then. A new id held by another owner, or by a different chat of the
 * same owner, is a collision: the old chat is reported and kept where it is, never overwritten and
 * never dropped. Index documents go last, each only once none of its owner's chats is left behind.
 * Nothing is written without `--apply`: the dry run reports what a run would do.
 */
import { isDeepStrictEqual } from "node:util";
import type { Command } from "commander";
import type { ChatMessage } from "../../runtime/core/messages.js";
import type { AgentSession } from "../../runtime/core/session.js";
import { StatebagError } from "../../runtime/core/errors.js";
import { EncryptedStoreError, EncryptionKeyError } from "../../runtime/stores/encryption/errors.js";
import {
  ConflictError,
  StoreAuthenticationError,
  StoreNotSetUpError,
  StoreUnavailableError,
} from "../../runtime/stores/errors.js";
import type { SessionStore, StoredSession } from "../../runtime/stores/types.js";
import { action, jsonOption, storeOption, type CommandContext } from "../context.js";
import { messageOf } from "../context.js";
import { CliError, echo, EXIT, type ExitCode, type Output } from "../io.js";
import { listedLines, plural } from "../session-report.js";
import { cliKeyring, keyringOption, openCliStore } from "../store.js";

interface UpgradeCliOptions {
  store?: string;
  keyring?: string;
  json?: boolean;
  apply?: boolean;
  dryRun?: boolean;
  idPrefix: string;
}

/** The `chats` command group. */
function chatsCommand(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === "chats") ??
    program
      .command("chats")
      .summary("manage the chats of statebag/http's chat server")
      .description("Manage the chats statebag/http's chat server keeps in a store.")
  );
}

export function registerChatsUpgrade(program: Command, context: CommandContext): void {
  chatsCommand(program)
    .command("upgrade")
    .summary("move the chats statebag 0.1.0's chat server wrote to the current layout (dry run unless --apply)")
    .description(
      "Moves every chat statebag 0.1.0's chat server wrote (<prefix>/<owner>/<chat id>, listed in one index document per owner, <prefix>-index/<owner>) " +
        "to the layout the chat server reads now: an owned session <prefix>/<chat id> with meta.owner, the title (from the index document, else the first user message) and the label statebag.type=chat. " +
        "Index documents are removed last, each once every chat of its owner has moved.\n\n" +
        "Without --apply nothing is written: it lists what a run would do. " +
        "A chat whose new id is already held by another owner (or by a different chat of the same owner) is a collision: reported, left at its old id, exit 1. " +
        "Safe to run again: an interrupted run (Ctrl-C, a crash) is finished by the next one, and a finished one changes nothing. " +
        "Run it when the new chat server is deployed (a 0.1.0 server still running writes old rows; a rerun moves them).",
    )
    .addOption(storeOption())
    .addOption(keyringOption())
    .option("--apply", "move the chats (without it: a dry run, nothing written)")
    .option("--dry-run", "write nothing, report what --apply would do (the default)")
    .option("--id-prefix <prefix>", "the chat server's idPrefix (createChatHandler's option)", "ui-chat")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag chats upgrade --store postgres://app@db/app            # what would move
  $ statebag chats upgrade --store postgres://app@db/app --apply
  $ statebag chats upgrade --apply --keyring keyring.json --json     # an encrypted store`,
    )
    .action(action(context, (options: UpgradeCliOptions) => upgrade(context, options)));
}

/** What happened (or, in a dry run, would happen) to one 0.1.0 chat. */
export type ChatUpgradeAction =
  /** Copied to its new id, old row deleted (dry run: `would-move`). */
  | "moved"
  | "would-move"
  /** Its copy was already there (an interrupted run): old row deleted (dry run: `would-finish`). */
  | "finished"
  | "would-finish"
  /** The new id is held by another owner or a different chat: kept at its old id. */
  | "collision"
  /** Could not be read or written: kept at its old id. */
  | "failed"
  /** Deleted by someone else while the upgrade ran. */
  | "vanished";

export interface ChatUpgradeItem {
  /** The 0.1.0 storage id. */
  from: string;
  /** The storage id the chat server reads now. */
  to: string;
  owner: string;
  chatId: string;
  action: ChatUpgradeAction;
  /** The title written (or to be written). */
  title?: string;
  /** Why a chat was not moved. */
  reason?: string;
}

export interface IndexUpgradeItem {
  id: string;
  action: "removed" | "would-remove" | "kept";
  reason?: string;
}

export interface ChatUpgradeReport {
  dryRun: boolean;
  idPrefix: string;
  /** 0.1.0 chat rows found. */
  found: number;
  owners: number;
  moved: number;
  finished: number;
  collisions: number;
  failed: number;
  vanished: number;
  chats: ChatUpgradeItem[];
  indexDocuments: IndexUpgradeItem[];
  /** True when Ctrl-C stopped the run (index documents were not touched): run it again. */
  aborted?: boolean;
}

/** The 0.1.0 index document: its state bag key and `$type` (a frozen format). */
const INDEX_KEY = "statebag.http.chats";
const INDEX_TYPE = "statebag.http.ChatIndex";
/** The labels the chat server reads now. */
const TYPE_LABEL = "statebag.type";
const ACTIVE_STREAM_LABEL = "statebag.activeStream";
/** Characters of the first user message kept as a title (the chat server's rule). */
const TITLE_CHARS = 80;
const PAGE = 200;
/** How often one chat is retried when it changes under the move (a 0.1.0 server still writing). */
const ATTEMPTS = 5;

/** The chat server's escaping of one id segment (statebag/http `escapeSegment`). */
export function escapeSegment(text: string): string {
  return text.replace(/%/g, "%25").replace(/\//g, "%2F");
}

function unescapeSegment(text: string): string {
  return text.replace(/%2F/g, "/").replace(/%25/g, "%");
}

interface OldChat {
  from: string;
  escapedOwner: string;
  owner: string;
  chatId: string;
  /** Remaining time to live of the old row, carried over to the new one. */
  ttlMs?: number;
  /** For the order of the moves: the index's time of the chat, else the row's last save. */
  updatedAt: string;
}

export interface UpgradeChatsOptions {
  idPrefix?: string;
  apply?: boolean;
  signal?: AbortSignal;
  onChat?: (item: ChatUpgradeItem) => void;
}

/**
 * Finds and moves (with `apply`) the 0.1.0 chats of `store`. Scans only the ids under the prefix
 * (a scan cursor is the id it starts after), owner by owner: one owner's chats are contiguous in id
 * order. Each owner's chats move oldest first, so the new list (newest save first) keeps the order
 * the 0.1.0 list had.
 */
export async function upgradeChats(store: SessionStore, options: UpgradeChatsOptions = {}): Promise<ChatUpgradeReport> {
  const prefix = options.idPrefix ?? "ui-chat";
  const apply = options.apply === true;
  const report: ChatUpgradeReport = {
    dryRun: !apply,
    idPrefix: prefix,
    found: 0,
    owners: 0,
    moved: 0,
    finished: 0,
    collisions: 0,
    failed: 0,
    vanished: 0,
    chats: [],
    indexDocuments: [],
  };
  /** Owners (escaped) with a chat left at its old id: their index documents stay. */
  const leftBehind = new Set<string>();
  /** A dry run writes no new row, so it remembers the new ids it would write: a second chat for one is a collision. */
  const planned = apply ? undefined : new Set<string>();
  const head = `${prefix}/`;

  const moveOwner = async (chats: OldChat[]): Promise<boolean> => {
    report.owners++;
    const titles = await indexTitles(store, `${prefix}-index/${chats[0].escapedOwner}`);
    const ttls = await remainingTtls(store, `${head}${chats[0].escapedOwner}/`);
    for (const chat of chats) {
      const ttlMs = ttls.get(chat.from);
      if (ttlMs !== undefined) chat.ttlMs = ttlMs;
    }
    for (const chat of chats) {
      const known = titles.get(chat.chatId);
      if (known) chat.updatedAt = known.updatedAt;
    }
    chats.sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : a.from < b.from ? -1 : 1));
    for (const chat of chats) {
      if (options.signal?.aborted) return false;
      const to = `${head}${escapeSegment(chat.chatId)}`;
      const item = await moveChat(store, chat, to, titles.get(chat.chatId)?.title, planned);
      report.chats.push(item);
      if (item.action === "moved" || item.action === "would-move") report.moved++;
      else if (item.action === "finished" || item.action === "would-finish") report.finished++;
      else if (item.action === "collision") report.collisions++;
      else if (item.action === "failed") report.failed++;
      else report.vanished++;
      if (item.action === "collision" || item.action === "failed") leftBehind.add(chat.escapedOwner);
      options.onChat?.(item);
    }
    return true;
  };

  let group: OldChat[] = [];
  let cursor: string | undefined = head;
  scan: while (cursor !== undefined) {
    // Ids and metadata only: the chats already in the current layout are passed over unread.
    const page = await store.scan({ cursor, limit: PAGE });
    for (const item of page.items) {
      if (!item.id.startsWith(head)) {
        cursor = undefined;
        break scan;
      }
      const segments = item.id.slice(head.length).split("/");
      // One segment: a chat of the current layout; more than two: nothing the chat server wrote.
      if (segments.length !== 2 || segments[0] === "" || segments[1] === "") continue;
      // 0.1.0 never set an owner: an owned row is a chat of the current layout under a longer
      // prefix (idPrefix "a/b" seen from "a"), or no chat at all. Never moved.
      if (item.meta?.owner !== undefined) continue;
      report.found++;
      const chat: OldChat = {
        from: item.id,
        escapedOwner: segments[0],
        owner: unescapeSegment(segments[0]),
        chatId: unescapeSegment(segments[1]),
        updatedAt: item.meta?.updatedAt ?? "",
      };
      if (group.length > 0 && group[0].escapedOwner !== chat.escapedOwner) {
        if (!(await moveOwner(group))) return { ...report, aborted: true };
        group = [];
      }
      group.push(chat);
    }
    cursor = page.cursor;
  }
  if (group.length > 0 && !(await moveOwner(group))) return { ...report, aborted: true };
  if (options.signal?.aborted) return { ...report, aborted: true };

  // Index documents last: each once none of its owner's chats is left at a 0.1.0 id.
  const indexHead = `${prefix}-index/`;
  cursor = indexHead;
  while (cursor !== undefined) {
    const page = await store.scan({ cursor, limit: PAGE });
    let done = false;
    for (const item of page.items) {
      if (!item.id.startsWith(indexHead)) {
        done = true;
        break;
      }
      const escapedOwner = item.id.slice(indexHead.length);
      // Only what 0.1.0 wrote there: no owner, and the index state in the bag. Anything else under
      // the name is someone's data, never removed.
      if (escapedOwner === "" || escapedOwner.includes("/") || item.meta?.owner !== undefined) continue;
      if (!(await isChatIndex(store, item.id))) continue;
      // Counted from the store, not from this run: chats a previous run (or a 0.1.0 server since) left.
      const left = apply ? await hasOldChats(store, `${head}${escapedOwner}/`) : leftBehind.has(escapedOwner);
      if (left) {
        report.indexDocuments.push({
          id: item.id,
          action: "kept",
          reason: "chats of this owner are still at their 0.1.0 ids (see the chats not moved)",
        });
      } else if (!apply) {
        report.indexDocuments.push({ id: item.id, action: "would-remove" });
      } else {
        try {
          await store.delete(item.id, { expectedRevision: item.revision });
          report.indexDocuments.push({ id: item.id, action: "removed" });
        } catch (error) {
          if (!(error instanceof ConflictError)) throw error;
          report.indexDocuments.push({
            id: item.id,
            action: "kept",
            reason: "it changed while the upgrade ran (a 0.1.0 server still writing?): stop it, then run again",
          });
        }
      }
    }
    cursor = done ? undefined : page.cursor;
  }
  return report;
}

/**
 * The remaining time to live of each row under an owner's 0.1.0 namespace (`<prefix>/<owner>/`, one
 * contiguous range of ids), for the rows saved with one: only a scan with the stored text reports it.
 */
async function remainingTtls(store: SessionStore, ownerHead: string): Promise<Map<string, number>> {
  const ttls = new Map<string, number>();
  let cursor: string | undefined = ownerHead;
  while (cursor !== undefined) {
    const page = await store.scan({ cursor, limit: PAGE, includeText: true });
    cursor = page.cursor;
    for (const item of page.items) {
      if (!item.id.startsWith(ownerHead)) return ttls;
      if (item.ttlMs !== undefined) ttls.set(item.id, item.ttlMs);
    }
  }
  return ttls;
}

/** Whether any row is left under an owner's 0.1.0 namespace (`<prefix>/<owner>/`). */
async function hasOldChats(store: SessionStore, ownerHead: string): Promise<boolean> {
  const page = await store.scan({ cursor: ownerHead, limit: 1 });
  return page.items[0]?.id.startsWith(ownerHead) === true;
}

/** Whether the row is a 0.1.0 index document (its state bag holds the index state); false when it does not load. */
async function isChatIndex(store: SessionStore, id: string): Promise<boolean> {
  try {
    const bag = (await store.get(id))?.session.stateBag;
    const state = bag && Object.hasOwn(bag, INDEX_KEY) ? (bag[INDEX_KEY] as { $type?: unknown }) : undefined;
    return state?.$type === INDEX_TYPE;
  } catch (error) {
    if (isChatProblem(error)) return false;
    throw error;
  }
}

/** The owner's 0.1.0 index document as a map from chat id to its title and time (empty when absent or unreadable). */
async function indexTitles(
  store: SessionStore,
  id: string,
): Promise<Map<string, { title: string; updatedAt: string }>> {
  const titles = new Map<string, { title: string; updatedAt: string }>();
  let stored: StoredSession | undefined;
  try {
    stored = await store.get(id);
  } catch {
    // An unreadable index costs only the titles: they are taken from the chats' first messages.
    return titles;
  }
  const bag = stored?.session.stateBag;
  const state = bag && Object.hasOwn(bag, INDEX_KEY) ? (bag[INDEX_KEY] as unknown) : undefined;
  if (typeof state !== "object" || state === null) return titles;
  const { $type, chats } = state as { $type?: unknown; chats?: unknown };
  if ($type !== INDEX_TYPE || !Array.isArray(chats)) return titles;
  for (const chat of chats as unknown[]) {
    const { id: chatId, title, updatedAt } = (chat ?? {}) as Record<string, unknown>;
    if (typeof chatId === "string" && typeof title === "string" && typeof updatedAt === "string")
      titles.set(chatId, { title, updatedAt });
  }
  return titles;
}

/** Moves one chat (`planned` set: a dry run, which only says what it would do). */
async function moveChat(
  store: SessionStore,
  chat: OldChat,
  to: string,
  indexTitle: string | undefined,
  planned: Set<string> | undefined,
): Promise<ChatUpgradeItem> {
  const item = (action: ChatUpgradeAction, extra: { title?: string; reason?: string } = {}): ChatUpgradeItem => ({
    from: chat.from,
    to,
    owner: chat.owner,
    chatId: chat.chatId,
    action,
    ...extra,
  });
  // Set once this run wrote the new row: a retry that then finds it finishes a move of this run.
  const wrote = { created: false };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      const done = await moveOnce(store, chat, to, indexTitle, planned, item, wrote);
      return done.action === "finished" && wrote.created ? { ...done, action: "moved" } : done;
    } catch (error) {
      // A conflict: one of the rows changed between the reads and the write. Read both again.
      if (error instanceof ConflictError) continue;
      if (isChatProblem(error)) return item("failed", { reason: messageOf(error) });
      throw error;
    }
  }
  return item("failed", {
    reason: "it kept changing while being moved (a 0.1.0 server still writing?): stop it, then run again",
  });
}

/**
 * Whether an error is this chat's own (a row that does not load or save: invalid, tampered, an id
 * too long), reported with the chat while the run goes on; anything else (the store down, a missing
 * keyring or key, an unexpected error) stops the run, as it would stop every chat.
 */
function isChatProblem(error: unknown): boolean {
  return (
    error instanceof StatebagError &&
    !(
      error instanceof StoreUnavailableError ||
      error instanceof StoreNotSetUpError ||
      error instanceof StoreAuthenticationError ||
      error instanceof EncryptionKeyError ||
      error instanceof EncryptedStoreError
    )
  );
}

/** One attempt at moving a chat: reads both rows, then writes (a `ConflictError` means: read again). */
async function moveOnce(
  store: SessionStore,
  chat: OldChat,
  to: string,
  indexTitle: string | undefined,
  planned: Set<string> | undefined,
  item: (action: ChatUpgradeAction, extra?: { title?: string; reason?: string }) => ChatUpgradeItem,
  wrote: { created: boolean },
): Promise<ChatUpgradeItem> {
  const old = await store.get(chat.from);
  if (!old) return item("vanished");
  if (old.meta.owner !== undefined && old.meta.owner !== chat.owner)
    return item("failed", { reason: "the row is owned by another owner than the one its id names" });
  const existing = await store.get(to);
  const copy: AgentSession = { ...structuredClone(old.session), id: to };
  const title = indexTitle || (await firstUserText(store, old.session)) || existing?.meta.title || "";
  const labels: Record<string, string> = { ...old.meta.labels, [TYPE_LABEL]: "chat" };
  delete labels[ACTIVE_STREAM_LABEL];
  const ttl = chat.ttlMs !== undefined ? { ttlMs: Math.max(1, chat.ttlMs) } : {};
  if (existing) {
    if (existing.meta.owner !== chat.owner)
      return item("collision", {
        title,
        reason:
          existing.meta.owner === undefined
            ? "the new id is held by a session without an owner"
            : "the new id is held by a chat of another owner",
      });
    const relation = compareChats(old.session, existing.session);
    if (relation === "different")
      return item("collision", { title, reason: "the new id is held by a different chat of the same owner" });
    if (planned) return item("would-finish", { title: existing.meta.title ?? title });
    if (relation === "old-longer") {
      // The copy an interrupted run left is older than the chat (it was written to since): copy again.
      await store.save(copy, {
        expectedRevision: existing.revision,
        meta: { owner: chat.owner, title: existing.meta.title || title, labels },
        ...ttl,
      });
    }
    await store.delete(chat.from, { expectedRevision: old.revision });
    return item("finished", { title: existing.meta.title || title });
  }
  if (planned) {
    if (planned.has(to))
      return item("collision", { title, reason: "the new id is held by a chat of another owner (moved before it)" });
    planned.add(to);
    return item("would-move", { title });
  }
  await store.save(copy, { expectedRevision: null, meta: { owner: chat.owner, title, labels }, ...ttl });
  wrote.created = true;
  await store.delete(chat.from, { expectedRevision: old.revision });
  return item("moved", { title });
}

/**
 * How two versions of a chat relate: the same, one a continuation of the other (its history holds
 * the other's and more), or different chats. Moving is lossless only in the first three cases.
 */
export function compareChats(
  old: AgentSession,
  moved: AgentSession,
): "same" | "moved-longer" | "old-longer" | "different" {
  if (!isDeepStrictEqual(old.quarantine ?? [], moved.quarantine ?? [])) return "different";
  let movedLonger = false;
  let oldLonger = false;
  const oldBag = old.stateBag as Record<string, unknown>;
  const movedBag = moved.stateBag as Record<string, unknown>;
  for (const key of new Set([...Object.keys(oldBag), ...Object.keys(movedBag)])) {
    const inA = Object.hasOwn(oldBag, key);
    const inB = Object.hasOwn(movedBag, key);
    if (inA && inB && isDeepStrictEqual(oldBag[key], movedBag[key])) continue;
    const relation = !inA ? "b" : !inB ? "a" : longerHistory(oldBag[key], movedBag[key]);
    if (relation === "b") movedLonger = true;
    else if (relation === "a") oldLonger = true;
    else return "different";
  }
  if (movedLonger && oldLonger) return "different";
  return movedLonger ? "moved-longer" : oldLonger ? "old-longer" : "same";
}

/** Which of two history states continues the other ("a", "b"), or undefined when neither does. */
function longerHistory(a: unknown, b: unknown): "a" | "b" | undefined {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return undefined;
  const first = a as Record<string, unknown>;
  const second = b as Record<string, unknown>;
  if (first.$type !== second.$type) return undefined;
  if (first.$type === "InMemoryChatHistoryState" && Array.isArray(first.messages) && Array.isArray(second.messages)) {
    const [short, long, which] =
      first.messages.length < second.messages.length
        ? [first.messages, second.messages, "b" as const]
        : [second.messages, first.messages, "a" as const];
    if (short.length === long.length) return undefined;
    return short.every((m, i) => isDeepStrictEqual(m, long[i])) ? which : undefined;
  }
  if (first.$type === "StoredChatHistoryState" && first.storageId === second.storageId) {
    const [firstCount, secondCount] = [first.messageCount, second.messageCount];
    if (typeof firstCount === "number" && typeof secondCount === "number" && firstCount !== secondCount)
      return firstCount > secondCount ? "a" : "b";
  }
  return undefined;
}

/** The chat server's title rule: the first user message's text, spaces folded, cut at 80 characters. */
async function firstUserText(store: SessionStore, session: AgentSession): Promise<string> {
  let messages: readonly ChatMessage[] | undefined;
  for (const value of Object.values(session.stateBag) as unknown[]) {
    const state = value as { $type?: unknown; messages?: unknown; storageId?: unknown };
    if (state?.$type === "InMemoryChatHistoryState" && Array.isArray(state.messages)) {
      messages = state.messages as ChatMessage[];
      break;
    }
    if (state?.$type === "StoredChatHistoryState" && typeof state.storageId === "string") {
      messages = await store.messages.getMessages(state.storageId).catch(() => []);
      break;
    }
  }
  const first = messages?.find((m) => m.role === "user");
  const text = (first?.contents ?? [])
    .flatMap((c) => (c.$type === "text" ? [c.text] : []))
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > TITLE_CHARS ? `${text.slice(0, TITLE_CHARS - 1)}…` : text;
}

async function upgrade(context: CommandContext, options: UpgradeCliOptions): Promise<ExitCode> {
  if (options.apply && options.dryRun)
    throw new CliError(EXIT.usage, "--apply and --dry-run do not go together", {
      fix: "leave both out for a dry run, or pass --apply to move the chats",
    });
  const prefix = options.idPrefix;
  // Any text the handler took as idPrefix ("tenant-a/chats" included): chats are <prefix>/<owner>/<chat>.
  if (prefix === "" || prefix.endsWith("/") || prefix.includes("\0") || prefix.length > 200)
    throw new CliError(EXIT.usage, `--id-prefix ${echo(prefix)}: expected the chat server's idPrefix`, {
      fix: 'pass the idPrefix given to createChatHandler (default "ui-chat"), without a trailing "/"',
    });
  const apply = options.apply === true;
  const out = context.output(options);
  const opened = await openCliStore(options.store, context.environment, {
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(apply ? {} : { dryRun: true }),
  });
  const progress = await out.progress();
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once("SIGINT", onSigint);
  try {
    const started = Date.now();
    progress.start(0, apply ? "moving chats" : "checking chats");
    let seen = 0;
    const report = await upgradeChats(opened.store, {
      idPrefix: prefix,
      apply,
      signal: abort.signal,
      onChat: () => {
        progress.setTotal(++seen + 1);
        progress.increment();
      },
    });
    progress.stop();
    const ms = Date.now() - started;
    const problems = report.collisions + report.failed;
    out.result({
      ok: problems === 0 && !report.aborted,
      store: opened.url,
      ...(opened.empty ? { emptyStore: opened.empty } : {}),
      ...report,
      ms,
    });
    printReport(out, report, opened.url, ms);
    if (opened.empty) out.line(out.c.dim(`  dry run: ${echo(opened.empty)}, read as an empty store, nothing created`));
    if (report.aborted) {
      out.note(
        `${out.ce.yellow("stopped early")} after ${plural(report.chats.length, "chat")}\n  ${out.ce.dim("fix:")}   run it again to continue (chats already moved are not moved twice)`,
      );
      return EXIT.runtime;
    }
    return problems === 0 ? EXIT.ok : EXIT.failed;
  } finally {
    process.removeListener("SIGINT", onSigint);
    progress.stop();
    await opened.close();
  }
}

function printReport(out: Output, report: ChatUpgradeReport, url: string, ms: number): void {
  const { c: colors } = out;
  const dry = report.dryRun;
  const parts = [
    colors.green(`${report.moved} ${dry ? "would move" : "moved"}`),
    ...(report.finished
      ? [`${report.finished} ${dry ? "would be finished" : "finished"} (moved by an interrupted run)`]
      : []),
    ...(report.collisions ? [colors.red(`${plural(report.collisions, "collision")} kept at the old id`)] : []),
    ...(report.failed ? [colors.red(`${report.failed} failed, kept at the old id`)] : []),
    ...(report.vanished ? [`${report.vanished} deleted meanwhile`] : []),
  ];
  const removed = report.indexDocuments.filter((d) => d.action !== "kept").length;
  const kept = report.indexDocuments.length - removed;
  out.line(
    `${dry ? "dry run: " : ""}${plural(report.found, "0.1.0 chat")} of ${plural(report.owners, "owner")} in ${url}: ${parts.join(", ")} ${colors.dim(`(${ms} ms)`)}`,
  );
  if (report.indexDocuments.length > 0)
    out.line(
      `  ${plural(report.indexDocuments.length, "index document")}: ${removed} ${dry ? "would be removed" : "removed"}${kept ? `, ${kept} kept` : ""}`,
    );
  // Ids and titles come from the store: escaped and cut.
  const arrow = (i: ChatUpgradeItem) => `${echo(i.from)} -> ${echo(i.to)}`;
  const problems = report.chats.filter((i) => i.action === "collision" || i.action === "failed");
  for (const line of listedLines(problems, (i) => `${colors.red("✖")} ${arrow(i)}: ${echo(i.reason ?? "", 300)}`, "  "))
    out.line(line);
  if (dry) {
    const planned = report.chats.filter((i) => i.action === "would-move" || i.action === "would-finish");
    for (const line of listedLines(
      planned,
      (i) =>
        `${arrow(i)}${i.action === "would-finish" ? " (copy there: delete the old row)" : ""}  ${colors.dim(`title ${JSON.stringify(echo(i.title ?? "", 80))}`)}`,
      "  ",
    ))
      out.line(line);
  }
  for (const indexDocument of report.indexDocuments.filter((d) => d.action === "kept").slice(0, 50))
    out.line(`  ${colors.yellow("kept")} ${echo(indexDocument.id)}: ${echo(indexDocument.reason ?? "")}`);
  if (problems.length > 0)
    out.line(
      colors.dim(
        "  a chat at a collision is kept at its 0.1.0 id (the chat server does not show it): rename or delete the row holding its new id, then run again",
      ),
    );
  if (dry && report.found + report.indexDocuments.length > 0)
    out.line(colors.dim("  nothing written: run again with --apply to move them"));
}
