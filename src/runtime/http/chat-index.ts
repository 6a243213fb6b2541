/**
 * The list of an owner's chats. Stores have no listing by owner yet, so the default index is one
 * small document per owner kept in the same store (a session whose state bag holds the list),
 * updated with compare-and-swap when a chat is created, updated or deleted. The `ChatIndex`
 * interface is what the handler uses, so a store with a native `list({ owner })` can replace it.
 */
import type { AgentSession } from "../core/session.js";
import { ConflictError } from "../stores/errors.js";
import type { SessionStore } from "../stores/types.js";

export interface ChatSummary {
  /** The chat id the client knows (not the storage id). */
  id: string;
  /** The first user message, shortened. */
  title: string;
  /** ISO 8601 time of the last committed turn. */
  updatedAt: string;
}

export interface ChatPage {
  /** Newest first. */
  chats: ChatSummary[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  cursor?: string;
}

export interface ChatIndex {
  /** The owner's chats, newest first. `cursor` is opaque; `limit` 1..100. */
  list(owner: string, options: { cursor?: string; limit: number }): Promise<ChatPage>;
  /** Records a chat as created or updated (moves it to the front). */
  touch(owner: string, chat: ChatSummary): Promise<void>;
  /** Forgets a chat; a chat not listed is not an error. */
  remove(owner: string, chatId: string): Promise<void>;
}

/** The state bag key and `$type` of the index document (kept verbatim by the store: it is data). */
export const CHAT_INDEX_KEY = "statebag.http.chats";
export const CHAT_INDEX_TYPE = "statebag.http.ChatIndex";

interface IndexState {
  $type: typeof CHAT_INDEX_TYPE;
  $version: 1;
  chats: ChatSummary[];
}

/** The opaque cursor is the position after the last item returned: its time and id. */
function encodeCursor(chat: ChatSummary): string {
  return Buffer.from(JSON.stringify([chat.updatedAt, chat.id]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): [string, string] | undefined {
  if (cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string")
      return [value[0], value[1]];
  } catch {
    // not ours
  }
  return undefined;
}

/** Newest first; ties broken by id so the order (and every cursor) is total. */
function newestFirst(a: ChatSummary, b: ChatSummary): number {
  return a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export class InvalidCursorError extends Error {
  constructor() {
    super("the cursor is not one this server gave out");
  }
}

/** The default index: one document per owner in `store`, under `documentId(owner)`. */
export class StoreChatIndex implements ChatIndex {
  constructor(
    private readonly store: SessionStore,
    private readonly documentId: (owner: string) => string,
    private readonly options: { retries?: number; maxChats?: number } = {},
  ) {}

  async list(owner: string, options: { cursor?: string; limit: number }): Promise<ChatPage> {
    const loaded = await this.store.get(this.documentId(owner));
    const chats = [...readIndex(loaded?.session)].sort(newestFirst);
    let start = 0;
    if (options.cursor !== undefined) {
      const after = decodeCursor(options.cursor);
      if (!after) throw new InvalidCursorError();
      const [updatedAt, id] = after;
      start = chats.findIndex((c) => newestFirst(c, { id, updatedAt, title: "" }) > 0);
      if (start < 0) start = chats.length;
    }
    const page = chats.slice(start, start + options.limit);
    const more = start + options.limit < chats.length;
    return more ? { chats: page, cursor: encodeCursor(page[page.length - 1]) } : { chats: page };
  }

  touch(owner: string, chat: ChatSummary): Promise<void> {
    const max = this.options.maxChats ?? 10_000;
    return this.update(owner, (chats) => {
      const previous = chats.find((c) => c.id === chat.id);
      const next = [{ ...chat, title: previous?.title || chat.title }, ...chats.filter((c) => c.id !== chat.id)];
      return next.sort(newestFirst).slice(0, max);
    });
  }

  remove(owner: string, chatId: string): Promise<void> {
    return this.update(owner, (chats) =>
      chats.some((c) => c.id === chatId) ? chats.filter((c) => c.id !== chatId) : undefined,
    );
  }

  /** Read, change, save with compare-and-swap; a conflict reloads and applies the change again. */
  private async update(owner: string, change: (chats: ChatSummary[]) => ChatSummary[] | undefined): Promise<void> {
    const id = this.documentId(owner);
    const retries = this.options.retries ?? 8;
    for (let attempt = 0; ; attempt++) {
      const loaded = await this.store.get(id);
      const next = change([...readIndex(loaded?.session)]);
      if (!next) return;
      const state: IndexState = { $type: CHAT_INDEX_TYPE, $version: 1, chats: next };
      const session: AgentSession = {
        id,
        stateBag: { [CHAT_INDEX_KEY]: state as unknown as AgentSession["stateBag"][string] },
      };
      try {
        await this.store.save(session, { expectedRevision: loaded?.revision ?? null });
        return;
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt >= retries) throw error;
      }
    }
  }
}

function readIndex(session: AgentSession | undefined): readonly ChatSummary[] {
  const state = session?.stateBag[CHAT_INDEX_KEY] as unknown as Partial<IndexState> | undefined;
  if (!state || state.$type !== CHAT_INDEX_TYPE || !Array.isArray(state.chats)) return [];
  return state.chats.filter(
    (c): c is ChatSummary =>
      typeof c?.id === "string" && typeof c.title === "string" && typeof c.updatedAt === "string",
  );
}
