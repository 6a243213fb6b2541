/**
 * Exports of a branched history write its active path and say what they left out: `toUIMessages`
 * and the Agent Framework exporters call `onBranchesLeftOut` with the branches beside the path
 * (where each starts, its first message, how many messages it holds); a linear history reports
 * nothing.
 */
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { exportSessionDocument } from "../../src/runtime/interop/index.js";
import { branchesLeftOut, type BranchesLeftOut } from "../../src/runtime/builtins/branches-left-out.js";
import { toUIMessages } from "../../src/runtime/ui-messages/to-ui.js";

describe("exports of a branched history", () => {
  it("write the active path and report the branches left out", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession({ id: "left-out" });
    await agent.run("First question", session);
    const linear: BranchesLeftOut[] = [];
    toUIMessages(session, { onBranchesLeftOut: (r) => linear.push(r) });
    expect(linear).toEqual([]);
    expect(branchesLeftOut(session)).toBeUndefined();

    const [question, answer] = await agent.history.listMessages(session);
    await agent.regenerate(session);
    await agent.run("Second question", session);
    await agent.editMessage(session, question.messageId!, "First question, edited");

    const reports: BranchesLeftOut[] = [];
    const ui = toUIMessages(session, { onBranchesLeftOut: (r) => reports.push(r) });
    expect(ui).toHaveLength(2);
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report.sessionId).toBe("left-out");
    // The original question with everything after it (its two answers and the second turn).
    expect(report.branches).toEqual([{ parentId: null, messageId: question.messageId, messageCount: 5 }]);
    expect(report.messageCount).toBe(5);
    // Ids only: the report names the branches, it never carries their text.
    expect(JSON.stringify(report)).not.toContain("First question");
    expect(answer.messageId).toBeDefined();

    const exported: BranchesLeftOut[] = [];
    const doc = exportSessionDocument(session, { to: "python", onBranchesLeftOut: (r) => exported.push(r) }) as {
      state: Record<string, { messages: unknown[] }>;
    };
    expect(exported).toEqual(reports);
    expect(Object.values(doc.state)[0].messages).toHaveLength(2);
  });
});
