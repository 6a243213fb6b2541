/**
 * The states a group chat and a sequential workflow keep in their sessions, kept apart from the
 * group-chat classes so the generated registry lists them without loading agents.
 */
import type { ServiceSessionId, SessionKind } from "../core/session.js";
import type { ProviderState } from "../core/tagged.js";

/** How much of the group's history a channel has seen (kept in the channel's session). */
export interface GroupChatChannelState extends ProviderState<"statebag.GroupChatChannelState", 1> {
  channelKey: string;
  /**
   * Number of group history messages this channel has seen.
   * @TJS-type integer
   * @minimum 0
   */
  synced: number;
}

/** What a workflow session records about each participant besides its providers' state. */
export interface WorkflowParticipantState {
  kind?: SessionKind;
  conversationId?: ServiceSessionId;
}

/** The workflow's own key in its session: the participants' session kind and conversation id. */
export interface WorkflowState extends ProviderState<"statebag.WorkflowState", 1> {
  participants: { [channelKey: string]: WorkflowParticipantState };
}
