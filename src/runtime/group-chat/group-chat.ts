/**
 * `AgentGroupChat`: several agents, one conversation, each agent with its own session (channel).
 *
 * The chat keeps a primary history (every message said in the group, each agent's marked with its
 * `authorName`) and, per agent, a channel whose state is an ordinary `AgentSession` for that agent.
 * Agents take turns as a pluggable `selectNext` decides (round robin by default) until a
 * termination rule says stop (a turn limit and/or a predicate).
 *
 * Synchronization: when an agent takes its turn, the primary messages its channel has not seen yet
 * (what the user and the other agents said since its last turn, adapted by `adaptMessage`) are that
 * run's input. A local agent's history provider records them with its reply, so its history is the
 * group conversation as that agent sees it; a hosted agent sends them to its service conversation.
 * Nothing is written into a channel except by its own agent's run, so providers keep ownership of
 * their keys. A channel created later (a new agent, or a restored chat with more agents) catches
 * up with the whole primary history on its first turn.
 *
 * A turn is atomic: the agent runs on a working copy of its channel session, and the channel, the
 * primary history and the channel's sync mark are updated together, synchronously, only when the
 * run succeeded. A failed turn leaves the chat as it was, and the chat stays usable.
 */
import { toMessages, type ChatClientAgent, type RunOptions } from "../agent/agent.js";
import type { AgentInput, AgentResponse } from "../agent/response.js";
import { StatebagError } from "../core/errors.js";
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import {
  asSpokenBy,
  channelStateAccess,
  othersAsUser,
  resolveParticipants,
  speakerName,
  type ChannelKind,
  type GroupChatParticipant,
  type MessageAdapter,
} from "./channel.js";

export interface SelectionContext {
  /** The chat's agents, in the order they joined. */
  readonly agents: readonly ChatClientAgent[];
  readonly history: readonly ChatMessage[];
  /** 0-based turn number within the current `invoke`. */
  readonly turn: number;
  /** The agent that spoke last in the history, if it is still in the chat. */
  readonly lastAgent?: ChatClientAgent;
}

/** Picks the agent for the next turn. */
export type SelectNext = (context: SelectionContext) => ChatClientAgent | Promise<ChatClientAgent>;

/** Each agent in turn, continuing after whoever spoke last (also across a restore). */
export function roundRobin(): SelectNext {
  return ({ agents, lastAgent }) => {
    if (agents.length === 0)
      throw new StatebagError("group-chat-empty", "the chat has no agents to select", {
        hint: "add agents with chat.addAgent(agent)",
      });
    const last = lastAgent === undefined ? -1 : agents.indexOf(lastAgent);
    return agents[(last + 1) % agents.length];
  };
}

export interface GroupChatTurn {
  agent: ChatClientAgent;
  channelKey: string;
  response: AgentResponse;
  /** The turn's messages as recorded in the primary history (with `authorName`). */
  messages: ChatMessage[];
}

export interface TerminationContext {
  readonly history: readonly ChatMessage[];
  readonly lastTurn: GroupChatTurn;
  /** The turns of the current `invoke`. */
  readonly turns: readonly GroupChatTurn[];
}

export interface TerminationOptions {
  /** Turns per `invoke` at most. Default: one round (the number of agents). */
  maxTurns?: number;
  /** Stop after a turn when this returns true. */
  until?: (context: TerminationContext) => boolean | Promise<boolean>;
}

export interface AgentGroupChatOptions {
  agents?: readonly GroupChatParticipant[];
  selectNext?: SelectNext;
  termination?: TerminationOptions;
  /** How primary messages reach a channel. Default: `othersAsUser`. */
  adaptMessage?: MessageAdapter;
}

export interface GroupChatInvokeOptions extends RunOptions {
  /** Overrides the chat's `termination.maxTurns` for this call. */
  maxTurns?: number;
}

interface Channel {
  key: string;
  agent: ChatClientAgent;
  kind: ChannelKind;
  session: AgentSession;
}

interface Member {
  key: string;
  agent: ChatClientAgent;
  kind: ChannelKind;
}

/** What the serializer reads and writes; not part of the public API. */
export interface GroupChatInternals {
  members: Member[];
  history: ChatMessage[];
  channels: Map<string, Channel>;
  /** Restored channel states whose agent is not in the chat (yet). */
  pending: Map<string, AgentSession>;
}

const internals = new WeakMap<AgentGroupChat, GroupChatInternals>();

/** @internal The serializer's access to a chat's state. */
export function groupChatInternals(chat: AgentGroupChat): GroupChatInternals {
  const state = internals.get(chat);
  if (!state) throw new TypeError("not an AgentGroupChat");
  return state;
}

export class AgentGroupChat {
  readonly selectNext: SelectNext;
  readonly termination: TerminationOptions;
  readonly adaptMessage: MessageAdapter;
  private readonly state: GroupChatInternals = { members: [], history: [], channels: new Map(), pending: new Map() };
  private queue: Promise<void> = Promise.resolve();

  constructor(options: AgentGroupChatOptions = {}) {
    internals.set(this, this.state);
    this.selectNext = options.selectNext ?? roundRobin();
    this.termination = options.termination ?? {};
    this.adaptMessage = options.adaptMessage ?? othersAsUser;
    if (this.termination.maxTurns !== undefined) checkMaxTurns(this.termination.maxTurns);
    for (const participant of options.agents ?? []) this.addAgent(participant);
  }

  get agents(): readonly ChatClientAgent[] {
    return this.state.members.map((m) => m.agent);
  }

  /** The primary history (a copy). */
  get history(): readonly ChatMessage[] {
    return structuredClone(this.state.history);
  }

  /** Keys of restored channels waiting for their agent to join. */
  get pendingChannelKeys(): readonly string[] {
    return [...this.state.pending.keys()];
  }

  /**
   * Adds an agent. If a restored chat kept a channel under its key, the agent gets it back and
   * continues from there; otherwise its channel starts when it first speaks, from the whole history.
   */
  addAgent(participant: GroupChatParticipant): string {
    const [member] = resolveParticipants([participant], new Set(this.state.members.map((m) => m.key)));
    this.state.members.push(member);
    const kept = this.state.pending.get(member.key);
    if (kept) {
      this.state.pending.delete(member.key);
      this.state.channels.set(member.key, { ...member, session: kept });
    }
    return member.key;
  }

  /** The channel key of an agent in this chat. */
  channelKey(agent: ChatClientAgent): string {
    const member = this.state.members.find((m) => m.agent === agent);
    if (!member)
      throw new StatebagError(
        "group-chat-agent",
        `the agent ${JSON.stringify(speakerName(agent) ?? "(unnamed)")} is not in this chat`,
        { hint: "add it with chat.addAgent(agent)" },
      );
    return member.key;
  }

  /** The current session of a channel (by agent or key), if the channel has started. */
  channelSession(agentOrKey: ChatClientAgent | string): AgentSession | undefined {
    const key = typeof agentOrKey === "string" ? agentOrKey : this.channelKey(agentOrKey);
    return this.state.channels.get(key)?.session ?? this.state.pending.get(key);
  }

  /** Adds messages to the primary history (a string is a user message). */
  addMessages(input: AgentInput): void {
    // A loop, not push(...messages): spreading a long list overflows the call stack.
    const history = this.state.history;
    for (const message of structuredClone(toMessages(input))) history.push(message);
  }

  /** Runs turns until the termination rule says stop. Returns the turns taken. */
  invoke(options: GroupChatInvokeOptions = {}): Promise<GroupChatTurn[]> {
    return this.exclusive(async () => {
      const maxTurns = options.maxTurns ?? this.termination.maxTurns ?? Math.max(1, this.state.members.length);
      checkMaxTurns(maxTurns);
      const turns: GroupChatTurn[] = [];
      for (let turn = 0; turn < maxTurns; turn++) {
        options.signal?.throwIfAborted();
        const agent = await this.selectNext({
          agents: this.agents,
          history: this.state.history,
          turn,
          lastAgent: this.lastSpeaker(),
        });
        const done = await this.turn(agent, options);
        turns.push(done);
        if (
          this.termination.until &&
          (await this.termination.until({ history: this.state.history, lastTurn: done, turns }))
        )
          break;
      }
      return turns;
    });
  }

  /** One turn of the given agent. */
  invokeAgent(agent: ChatClientAgent, options: RunOptions = {}): Promise<GroupChatTurn> {
    return this.exclusive(() => this.turn(agent, options));
  }

  private async turn(agent: ChatClientAgent, options: RunOptions): Promise<GroupChatTurn> {
    const member = this.state.members.find((m) => m.agent === agent);
    if (!member)
      throw new StatebagError(
        "group-chat-agent",
        `the selected agent ${JSON.stringify(speakerName(agent) ?? "(unnamed)")} is not in this chat`,
        { hint: "selectNext must return one of context.agents" },
      );
    const existing = this.state.channels.get(member.key);
    const working = existing ? structuredClone(existing.session) : agent.createSession({ kind: member.kind });
    const mark = channelStateAccess.read(working);
    const seen = mark?.synced ?? 0;
    const history = this.state.history;
    const input: ChatMessage[] = [];
    for (const message of history.slice(seen)) {
      const adapted = this.adaptMessage(message, { channelKey: member.key, agent });
      if (adapted) input.push(structuredClone(adapted));
    }
    const response = await agent.run(input, working, options);
    // Commit: channel, primary history and sync mark together, with no await in between.
    const messages = asSpokenBy(agent, response.messages);
    for (const message of messages) history.push(message);
    channelStateAccess.write(working, {
      $type: "statebag.GroupChatChannelState",
      channelKey: member.key,
      synced: history.length,
    });
    this.state.channels.set(member.key, { ...member, session: working });
    return { agent, channelKey: member.key, response, messages: structuredClone(messages) };
  }

  private lastSpeaker(): ChatClientAgent | undefined {
    for (let i = this.state.history.length - 1; i >= 0; i--) {
      const message = this.state.history[i];
      if (message.role !== "assistant" || message.authorName === undefined) continue;
      return this.state.members.find((m) => speakerName(m.agent) === message.authorName)?.agent;
    }
    return undefined;
  }

  /** Turns run one at a time; a failed one does not block the next. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

function checkMaxTurns(maxTurns: number): void {
  if (!Number.isInteger(maxTurns) || maxTurns < 1)
    throw new RangeError(`maxTurns must be a positive integer, got ${maxTurns}`);
}
