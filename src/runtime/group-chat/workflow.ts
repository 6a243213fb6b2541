/**
 * `SequentialWorkflowAgent`: several agents wrapped as one, so a workflow is used like any agent.
 * Its caller sees one agent and one session; inside, each participant keeps its own state.
 *
 * Session layout: one ordinary `AgentSession`. Each participant's provider state sits in the same
 * state bag under its channel key as a namespace, `"<channelKey>/<providerKey>"`, for example
 * `"local:writer/statebag.chatHistory"`, and the participants' session kind and conversation id
 * sit in one `statebag.WorkflowState` under `"statebag.workflow"`. Every value stays a top-level,
 * `$type`-tagged provider state, so the session validates, migrates and round-trips like any
 * other: no nested sessions to special-case.
 *
 * A run: participant 1 gets the caller's input; each next participant gets the input plus what
 * the earlier participants said in this run (adapted as in a group chat: `othersAsUser`). Each
 * runs on a view of its own namespace. The workflow session changes only when every participant
 * succeeded: a failure anywhere leaves it exactly as it was.
 */
import { lockSession, toMessages, type ChatClientAgent, type RunOptions } from "../agent/agent.js";
import type { AgentInput, AgentResponse } from "../agent/response.js";
import { ConfigurationError, StatebagError } from "../core/errors.js";
import type { ChatMessage } from "../core/messages.js";
import { createSessionData, type AgentSession, type CreateSessionOptions, type StateBag } from "../core/session.js";
import { ProviderSessionState } from "../core/state-bag.js";
import { WorkflowStateType } from "../../generated/descriptors.js";
import {
  asSpokenBy,
  othersAsUser,
  resolveParticipants,
  type ChannelKind,
  type GroupChatParticipant,
  type MessageAdapter,
} from "./channel.js";

export type { WorkflowParticipantState, WorkflowState } from "../builtins/group-chat-states.js";
import type { WorkflowParticipantState } from "../builtins/group-chat-states.js";

export const WORKFLOW_STATE_KEY = "statebag.workflow";

const workflowState = new ProviderSessionState(WORKFLOW_STATE_KEY, WorkflowStateType, {
  initial: () => ({ $type: "statebag.WorkflowState", participants: {} }),
});

export interface SequentialWorkflowAgentOptions {
  /** Stable id (for use inside a group chat). Defaults to `name`. */
  id?: string;
  name?: string;
  participants: readonly GroupChatParticipant[];
  /** How one participant's messages reach the next. Default: `othersAsUser`. */
  adaptMessage?: MessageAdapter;
}

export interface WorkflowStep {
  channelKey: string;
  agent: ChatClientAgent;
  response: AgentResponse;
}

export interface WorkflowResponse extends AgentResponse {
  steps: WorkflowStep[];
}

/** The bag key of a participant's provider key. */
export const participantStateKey = (channelKey: string, providerKey: string) => `${channelKey}/${providerKey}`;

export class SequentialWorkflowAgent {
  readonly id: string | undefined;
  readonly name: string | undefined;
  readonly participants: readonly { key: string; agent: ChatClientAgent; kind: ChannelKind }[];
  private readonly adaptMessage: MessageAdapter;

  constructor(options: SequentialWorkflowAgentOptions) {
    if (!options.participants || options.participants.length === 0)
      throw new ConfigurationError(
        "a workflow needs at least one participant",
        "pass participants: [agentA, agentB, ...]",
      );
    this.name = options.name;
    this.id = options.id ?? options.name;
    this.participants = resolveParticipants(options.participants);
    this.adaptMessage = options.adaptMessage ?? othersAsUser;
  }

  /** A new workflow session (its participants' kinds are decided per participant). */
  createSession(options: Omit<CreateSessionOptions, "kind" | "conversationId"> = {}): AgentSession {
    return createSessionData({ id: options.id, stateBag: options.stateBag });
  }

  /** A participant's view of a workflow session: a copy, as that agent would see its own session. */
  participantSession(session: AgentSession, agentOrKey: ChatClientAgent | string): AgentSession {
    const participant = this.participants.find((p) => p.key === agentOrKey || p.agent === agentOrKey);
    if (!participant)
      throw new StatebagError(
        "workflow-participant",
        `no participant ${typeof agentOrKey === "string" ? JSON.stringify(agentOrKey) : "for that agent"} in this workflow`,
        { hint: `participants: ${this.participants.map((p) => p.key).join(", ")}` },
      );
    return this.viewOf(session, participant.key, participant.kind);
  }

  /** Runs every participant in order. The session is updated only if all of them succeed. */
  async run(
    input: AgentInput,
    session: AgentSession = this.createSession(),
    options: RunOptions = {},
  ): Promise<WorkflowResponse> {
    const release = await lockSession(session);
    try {
      const first = toMessages(input);
      const said: ChatMessage[] = [];
      const views: { key: string; view: AgentSession }[] = [];
      const steps: WorkflowStep[] = [];
      for (const { key, agent, kind } of this.participants) {
        const view = this.viewOf(session, key, kind);
        const earlier = said.flatMap((m) => {
          const adapted = this.adaptMessage(m, { channelKey: key, agent });
          return adapted ? [structuredClone(adapted)] : [];
        });
        const response = await agent.run([...structuredClone(first), ...earlier], view, options);
        for (const message of asSpokenBy(agent, response.messages)) said.push(message);
        views.push({ key, view });
        steps.push({ channelKey: key, agent, response });
      }
      // Commit every participant at once.
      const state = structuredClone(workflowState.readOrInit(session));
      for (const { key, view } of views) {
        for (const providerKey of Object.keys(view.stateBag))
          session.stateBag[participantStateKey(key, providerKey)] = view.stateBag[providerKey];
        const record: WorkflowParticipantState = {};
        if (view.kind !== undefined) record.kind = view.kind;
        if (view.conversationId !== undefined) record.conversationId = view.conversationId;
        state.participants[key] = record;
      }
      workflowState.write(session, state);
      const last = steps[steps.length - 1].response;
      const response: WorkflowResponse = { sessionId: session.id, messages: said, text: last.text, steps };
      if (last.usage) response.usage = last.usage;
      return response;
    } finally {
      release();
    }
  }

  private viewOf(session: AgentSession, key: string, kind: ChannelKind): AgentSession {
    const prefix = `${key}/`;
    const stateBag: StateBag = {};
    for (const bagKey of Object.keys(session.stateBag)) {
      if (bagKey.startsWith(prefix)) stateBag[bagKey.slice(prefix.length)] = structuredClone(session.stateBag[bagKey]);
    }
    const record = workflowState.read(session)?.participants[key];
    return createSessionData({
      id: `${session.id}/${key}`,
      kind: record?.kind ?? kind,
      conversationId: record?.conversationId === undefined ? undefined : structuredClone(record.conversationId),
      stateBag,
    });
  }
}
