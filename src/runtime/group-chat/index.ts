/** Many agents, one conversation: group chats, their serialization, and workflows as one agent. */
export { ChannelKeyError, GROUP_CHAT_STATE_KEY, channelKeyOf, othersAsUser } from "./channel.js";
export type { ChannelKind, GroupChatChannelState, GroupChatParticipant, MessageAdapter } from "./channel.js";
export { AgentGroupChat, roundRobin } from "./group-chat.js";
export type {
  AgentGroupChatOptions,
  GroupChatInvokeOptions,
  GroupChatTurn,
  SelectNext,
  SelectionContext,
  TerminationContext,
  TerminationOptions,
} from "./group-chat.js";
export { AGENT_CHAT_FORMAT, AGENT_CHAT_FORMAT_VERSION, AgentChatRestoreError, AgentChatSerializer } from "./serializer.js";
export type { AgentChatChannelDocument, AgentChatDocument, AgentChatRestoreReason, AgentChatRestoreReport, SerializeAgentChatOptions } from "./serializer.js";
export { SequentialWorkflowAgent, WORKFLOW_STATE_KEY, participantStateKey } from "./workflow.js";
export type { SequentialWorkflowAgentOptions, WorkflowParticipantState, WorkflowResponse, WorkflowState, WorkflowStep } from "./workflow.js";
