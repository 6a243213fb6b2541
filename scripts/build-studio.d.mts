/** The studio's page script bundled from src/cli/studio/client/app.ts: its text, or written to `outfile`. */
export function bundleStudioClient(outfile?: string): Promise<string | undefined>;
