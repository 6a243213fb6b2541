/**
 * The chat list layout of statebag 0.1.0, kept only so an upgrade can find what it wrote: one index
 * document per owner (`<idPrefix>-index/<owner>`, its state bag holding `CHAT_INDEX_KEY` of type
 * `CHAT_INDEX_TYPE`) and chats under `<idPrefix>/<owner>/<chat id>`. The handler no longer reads
 * or writes either: chats are the store's owned sessions, listed with `store.list({ owner })`.
 */

/** The state bag key of a 0.1.0 chat index document. */
export const CHAT_INDEX_KEY = "statebag.http.chats";
/** The `$type` of a 0.1.0 chat index document's state. */
export const CHAT_INDEX_TYPE = "statebag.http.ChatIndex";
