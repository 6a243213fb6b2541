/**
 * `statebag/group-chat`: many agents, one conversation. Group chats with turn selection and
 * termination, their serialization (one document for the chat and every agent's channel), and a
 * sequential workflow that runs as one agent.
 */
export { AgentGroupChat, roundRobin } from "./runtime/group-chat/group-chat.js";
export type {
  AgentGroupChatOptions,
  GroupChatInvokeOptions,
  GroupChatTurn,
  SelectNext,
  SelectionContext,
  TerminationContext,
  TerminationOptions,
} from "./runtime/group-chat/group-chat.js";
export { ChannelKeyError, GROUP_CHAT_STATE_KEY, channelKeyOf, othersAsUser } from "./runtime/group-chat/channel.js";
export type {
  ChannelKind,
  GroupChatChannelState,
  GroupChatParticipant,
  MessageAdapter,
} from "./runtime/group-chat/channel.js";
export {
  AGENT_CHAT_FORMAT,
  AGENT_CHAT_FORMAT_VERSION,
  AgentChatRestoreError,
  AgentChatSerializer,
} from "./runtime/group-chat/serializer.js";
export type {
  AgentChatChannelDocument,
  AgentChatDocument,
  AgentChatRestoreReason,
  AgentChatRestoreReport,
  SerializeAgentChatOptions,
} from "./runtime/group-chat/serializer.js";
export { SequentialWorkflowAgent, WORKFLOW_STATE_KEY, participantStateKey } from "./runtime/group-chat/workflow.js";
export type {
  SequentialWorkflowAgentOptions,
  WorkflowParticipantState,
  WorkflowResponse,
  WorkflowState,
  WorkflowStep,
} from "./runtime/group-chat/workflow.js";
