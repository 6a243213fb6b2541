/**
 * The branches of a chat on the wire. `GET ${base}/chats/:id` marks each message that has other
 * versions (a regenerated answer, an edited message) with `metadata.branch`
 * (`{ index, count, siblingIds }`, oldest first) so a UI shows ‹ index+1/count ›;
 *
 *   POST ${base}/chats/:id/switch  { messageId }      makes the branch holding the message active;
 *                                                     answers with the chat's messages, as GET does
 *   POST ${base}/chats/:id/fork    { messageId, id? } a new chat of the same owner holding the path
 *                                                     up to the message: 201 { id, forkedFrom }
 *
 * Each is one compare-and-swap save; a chat changed meanwhile is a 409 and nothing is saved.
 */
import type { StoredSession } from "../stores/types.js";
import { inMemorySiblings } from "../agent/providers/history-branches.js";
import { toUIMessages } from "../ui-messages/to-ui.js";
import type { UIMessage } from "../ui-messages/types.js";
import { checkChatId, ID_PATTERN } from "./ai-sdk-ui.js";
import { historyTree } from "./chat-data.js";
import { chatNotFound } from "./chat-error.js";
import { HttpProblem } from "./problem.js";
import { json, ownerOf, readJson, type Route, type RouteContext } from "./request.js";
import { withApprovalProgress } from "./turn-message.js";

/** The chat's active path as UI messages, each message with other versions marked (`metadata.branch`). */
export function chatMessages(context: RouteContext, chatId: string, stored: StoredSession): UIMessage[] {
  // Files kept in the blob store are shown from the files route (GET /chat/:id/files/:hash).
  const files = `${context.basePath}/chat/${encodeURIComponent(chatId)}/files/`;
  const key = context.chats.historyKey;
  const messages = withApprovalProgress(
    toUIMessages(stored.session, { historyKey: key, fileUrl: (ref) => files + ref.hash }),
    stored.session,
  );
  const tree = historyTree(stored.session, key);
  if (!tree || tree.branchPoints.length === 0) return messages;
  // Only a message named by a branch point has other versions: the others cost nothing to check.
  const versioned = new Set(tree.branchPoints.flatMap((point) => point.childIds));
  return messages.map((message) => {
    if (!versioned.has(message.id)) return message;
    let siblings: ReturnType<typeof inMemorySiblings>;
    try {
      siblings = inMemorySiblings(tree, stored.session.id, message.id);
    } catch {
      return message; // a UI message the history names otherwise (not a branch point)
    }
    if (siblings.count < 2) return message;
    const metadata = typeof message.metadata === "object" && message.metadata !== null ? message.metadata : {};
    return {
      ...message,
      metadata: {
        ...metadata,
        branch: { index: siblings.index, count: siblings.count, siblingIds: siblings.siblingIds },
      },
    };
  });
}

/** The `messageId` (and optional `id`) of a branch request's body. */
async function branchBody(context: RouteContext, request: Request): Promise<{ messageId: string; id?: string }> {
  const body = await readJson(context, request);
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new HttpProblem("http-invalid-request", { detail: "The body must be a JSON object." });
  const { messageId, id } = body as Record<string, unknown>;
  if (typeof messageId !== "string" || !ID_PATTERN.test(messageId))
    throw new HttpProblem("http-invalid-request", { detail: '"messageId" must be the id of a message of the chat.' });
  if (id !== undefined && (typeof id !== "string" || !ID_PATTERN.test(id)))
    throw new HttpProblem("http-invalid-request", {
      detail: "The new chat's id must be 1-128 letters, digits, '-' or '_'.",
    });
  return id === undefined ? { messageId } : { messageId, id };
}

export const switchBranch: Route = async (context, request, _url, id) => {
  const owner = await ownerOf(context, request);
  const chatId = checkChatId(id);
  const { messageId } = await branchBody(context, request);
  const stored = await context.chats.switchBranch(owner, chatId, messageId);
  return json(200, chatMessages(context, chatId, stored));
};

export const forkChat: Route = async (context, request, _url, id) => {
  const owner = await ownerOf(context, request);
  const chatId = checkChatId(id);
  const body = await branchBody(context, request);
  const fork = await context.chats.fork(owner, chatId, body.messageId, body.id);
  if (!fork) throw chatNotFound();
  return json(201, { id: fork, forkedFrom: { chatId, messageId: body.messageId } });
};
