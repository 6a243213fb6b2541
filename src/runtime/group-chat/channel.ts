/**
 * Channels: what one agent of a group keeps of a shared conversation.
 *
 * A channel's state IS an `AgentSession` for that agent: a hosted agent's conversation id, a local
 * agent's adapted history in its history provider, its context providers' state. The group adds
 * one key of its own, `statebag.groupChat`, recording how much of the group's history the channel
 * has seen.
 *
 * Channel keys name a channel across processes and releases: `"<kind>:<agent id>"`, for example
 * `"hosted:researcher"` or `"local:writer"`, where the id is the agent's explicit `id` (or, without
 * one, its `name`) and the kind says where its conversation lives. Nothing random and nothing
 * derived from object identity goes into a key, so a restored chat finds its channels again.
 */
import type { ChatClientAgent } from "../agent/agent.js";
import { StatebagError } from "../core/errors.js";
import type { ChatMessage } from "../core/messages.js";
import { ProviderSessionState } from "../core/state-bag.js";
import { GroupChatChannelStateType } from "../../generated/descriptors.js";

/** Where a channel's conversation lives: in its session (`local`) or at the model service (`hosted`). */
export type ChannelKind = "local" | "hosted";

/** An agent taking part in a group chat or workflow, optionally with its channel kind fixed. */
export type GroupChatParticipant = ChatClientAgent | { agent: ChatClientAgent; kind?: ChannelKind };

/** A channel key was missing, malformed or taken twice. */
export class ChannelKeyError extends StatebagError {
  constructor(message: string, hint: string) {
    super("channel-key", message, { hint });
  }
}

export type { GroupChatChannelState } from "../builtins/group-chat-states.js";

export const GROUP_CHAT_STATE_KEY = "statebag.groupChat";

export const channelStateAccess = new ProviderSessionState(GROUP_CHAT_STATE_KEY, GroupChatChannelStateType, {
  initial: () => ({ $type: "statebag.GroupChatChannelState", channelKey: "", synced: 0 }),
});

export function participantOf(participant: GroupChatParticipant): { agent: ChatClientAgent; kind?: ChannelKind } {
  return "agent" in participant && !("client" in participant) ? participant : { agent: participant as ChatClientAgent };
}

/** The kind a channel gets when none is given: hosted when the agent's service keeps conversations. */
export function defaultChannelKind(agent: ChatClientAgent): ChannelKind {
  return agent.client.metadata.supportsServiceStorage ? "hosted" : "local";
}

/** The stable channel key of an agent: `"<kind>:<id or name>"`. */
export function channelKeyOf(agent: ChatClientAgent, kind: ChannelKind = defaultChannelKind(agent)): string {
  const id = agent.id ?? agent.name;
  if (typeof id !== "string" || id.trim() === "") {
    throw new ChannelKeyError(
      "an agent in a group has no id or name, so its channel cannot be found again after a restore",
      'give the agent a stable id: new ChatClientAgent({ id: "researcher", ... }) (or a name)',
    );
  }
  if (kind !== "local" && kind !== "hosted")
    throw new ChannelKeyError(`unknown channel kind ${JSON.stringify(kind)}`, 'use "local" or "hosted"');
  return `${kind}:${id}`;
}

/** Resolves participants to unique keys; two that would share a key is an error naming it. */
export function resolveParticipants(
  participants: readonly GroupChatParticipant[],
  taken: ReadonlySet<string> = new Set(),
): { key: string; agent: ChatClientAgent; kind: ChannelKind }[] {
  const seen = new Set(taken);
  return participants.map((participant) => {
    const resolved = participantOf(participant);
    const agent = resolved.agent;
    const kind = resolved.kind ?? defaultChannelKind(agent);
    const key = channelKeyOf(agent, kind);
    if (seen.has(key)) {
      throw new ChannelKeyError(
        `two agents would share the channel key "${key}"`,
        "give each agent its own id (new ChatClientAgent({ id: ... })); agents of different kinds may share an id",
      );
    }
    seen.add(key);
    return { key, agent, kind };
  });
}

/** The name a channel's messages carry as `authorName` in the group history. */
export function speakerName(agent: ChatClientAgent): string | undefined {
  return agent.name ?? agent.id;
}

/**
 * How a group history message reaches another agent's channel; `undefined` leaves it out.
 *
 * Default (`othersAsUser`): what another agent said arrives as a `user` message carrying that
 * agent's `authorName` and only its text. A `user` role keeps every channel's conversation valid
 * for every model API (a model shown `assistant` turns it did not write tends to continue them as
 * its own, and strict APIs reject assistant turns without their tool results); `authorName` tells
 * the model (and OpenAI-style APIs through `name`) who spoke. Another agent's tool calls, tool
 * results, reasoning and usage are its own business and are not forwarded. User and system
 * messages pass through unchanged.
 */
export type MessageAdapter = (
  message: ChatMessage,
  target: { channelKey: string; agent: ChatClientAgent },
) => ChatMessage | undefined;

export const othersAsUser: MessageAdapter = (message) => {
  if (message.role === "tool") return undefined;
  if (message.role !== "assistant") return message;
  const contents = message.contents.filter((c) => c.$type === "text");
  if (contents.length === 0) return undefined;
  const adapted: ChatMessage = { role: "user", contents };
  if (message.authorName !== undefined) adapted.authorName = message.authorName;
  return adapted;
};

/**
 * Copies `messages` marking them as spoken by `agent` (the group history's record of a turn): the
 * agent's name (or id) becomes the `authorName`, replacing any a service set, so the history says
 * which agent spoke and round robin can continue after a restore.
 */
export function asSpokenBy(agent: ChatClientAgent, messages: readonly ChatMessage[]): ChatMessage[] {
  const name = speakerName(agent);
  return messages.map((m) => {
    const copy = structuredClone(m);
    if (name === undefined) return copy;
    const { authorName: _ignored, ...rest } = copy;
    return { authorName: name, ...rest };
  });
}
