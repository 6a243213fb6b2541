/**
 * #20: an app importing `statebag/openai` and `statebag/ai-sdk` bundles with esbuild whether or not
 * the model SDKs are installed, without inlining them, and the bundle loads the SDK at run time
 * when it is there (a request reaches the loopback server) or says what to install when it is not.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build, type Plugin } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion } from "./fixtures/openai.js";
import { startOpenAIServer, type OpenAITestServer } from "./openai-server.js";

const REPO = join(import.meta.dirname, "../..");
const run = promisify(execFile);

/** What esbuild sees when the SDKs are not installed: nothing to resolve. */
const sdksAbsent: Plugin = {
  name: "sdks-absent",
  setup(b) {
    b.onResolve({ filter: /^(openai|ai|@ai-sdk\/[^/]+)(\/.*)?$/ }, (args) => ({
      errors: [{ text: `Could not resolve "${args.path}" (not installed)` }],
    }));
  },
};

const APP = `
import { OpenAIChatClient } from ${JSON.stringify(join(REPO, "src/openai.ts"))};
import { AISDKChatClient } from ${JSON.stringify(join(REPO, "src/ai-sdk.ts"))};
const report = (what, error) => ({ [what]: { code: error.code, message: error.message.split("\\n")[0] } });
const out = {};
try {
  const client = new OpenAIChatClient({ model: "gpt-4.1-mini", baseURL: process.env.BASE_URL, apiKey: "test-key", maxRetries: 0 });
  const response = await client.getResponse([{ role: "user", contents: [{ $type: "text", text: "Hi" }] }]);
  out.openai = response.messages[0].contents[0].text;
} catch (error) {
  Object.assign(out, report("openai", error));
}
try {
  // A v3 model needs \`ai\` (wrapLanguageModel) at run time.
  const client = new AISDKChatClient({ specificationVersion: "v3", provider: "legacy", modelId: "m", doGenerate: async () => { throw new Error("reached the model"); } });
  await client.getResponse([{ role: "user", contents: [{ $type: "text", text: "Hi" }] }]);
} catch (error) {
  Object.assign(out, report("aiSdk", error));
}
console.log(JSON.stringify(out));
`;

let dir: string;
let server: OpenAITestServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "statebag-bundle-"));
  await writeFile(join(dir, "app.mjs"), APP);
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function bundle(name: string, plugins: Plugin[]): Promise<string> {
  const outfile = join(dir, name, "bundle.mjs");
  await mkdir(join(dir, name), { recursive: true });
  const result = await build({
    entryPoints: [join(dir, "app.mjs")],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile,
    plugins,
    logLevel: "silent",
    metafile: true,
  });
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs.filter((i) => /node_modules[\\/](openai|ai|@ai-sdk)[\\/]/.test(i))).toEqual([]);
  return outfile;
}

describe("bundling an app that uses the model clients (esbuild)", () => {
  it("succeeds without the SDKs installed; the bundle says what to install", async () => {
    const outfile = await bundle("absent", [sdksAbsent]);
    const { stdout } = await run(process.execPath, [outfile], { env: { ...process.env, BASE_URL: server.baseURL } });
    const out = JSON.parse(stdout) as Record<string, { code: string; message: string }>;
    expect(out.openai).toEqual({
      code: "missing-dependency",
      message: 'OpenAIChatClient needs the "openai" package, which is not installed',
    });
    expect(out.aiSdk).toMatchObject({
      code: "missing-dependency",
      message: expect.stringContaining('needs the "ai" package'),
    });
  });

  it("with the SDKs installed, leaves them out of the bundle and loads them at run time", async () => {
    const outfile = await bundle("present", []);
    await symlink(join(REPO, "node_modules"), join(dir, "present", "node_modules"), "dir");
    server.reply({ json: chatCompletion({ content: "Hello from the loopback server." }) });
    const { stdout } = await run(process.execPath, [outfile], { env: { ...process.env, BASE_URL: server.baseURL } });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out.openai).toBe("Hello from the loopback server.");
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/chat/completions"]);
    // `ai` was found and wrapped the v3 model, whose own failure is what came back.
    expect(out.aiSdk).toMatchObject({ code: "model-service", message: expect.stringContaining("reached the model") });
  });
});
