/**
 * `chatctx console`: prints a single-use link to the owner console.
 *
 * Locally, a running server serves the console next to its admin endpoint and the
 * command only asks it for a link; with no server, the command holds the data
 * directory and serves the console itself until stopped. With `--remote FUNCTION`
 * the console runs on this machine, on loopback, and every action is an admin
 * command sent to the stack's admin function with the caller's AWS credentials:
 * nothing new is exposed on the stack's public API.
 */
import type { Command } from 'commander';
import { createLogger } from '../lambdas/observability/logger.ts';
import { createEmbedder } from '../lambdas/embeddings/embedder-factory.ts';
import { readLocalConfig } from '../lambdas/local/local-config.ts';
import { openConsole } from '../lambdas/local/console-host.ts';
import { serveConsole } from '../lambdas/local/owner-listener.ts';
import { createConsole } from '../lambdas/console/console-app.ts';

export interface ConsoleCliTools {
  readonly dataDir: () => string;
  readonly remote: () => string | undefined;
  readonly json: () => boolean;
  readonly wholeNumber: (value: string) => number;
}

interface ConsoleOptions {
  readonly port?: number;
  readonly mcpUrl?: string;
}

/** Waits for Ctrl+C or a termination signal, then stops what this command serves. */
function serveUntilStopped(close: () => Promise<void>): void {
  const stop = async () => {
    await close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function announce(tools: ConsoleCliTools, link: string, servedBy: string, staying: boolean): void {
  if (tools.json()) {
    console.log(JSON.stringify({ url: link, served_by: servedBy }));
    return;
  }
  console.log(
    [
      `Owner console (served by ${servedBy}). Open this link once; it works for 10 minutes:`,
      '',
      `  ${link}`,
      '',
      staying ? 'Stop with Ctrl+C.' : 'Run `chatctx console` again for another link.',
    ].join('\n'),
  );
}

async function remoteConsole(functionName: string, tools: ConsoleCliTools, opts: ConsoleOptions): Promise<void> {
  const { runRemoteCommand } = await import('../lambdas/aws/remote-import.ts');
  const console = createConsole({
    run: (command) => runRemoteCommand(functionName, command),
    target: `stack admin function ${functionName}`,
    mcpUrl: opts.mcpUrl,
    logger: createLogger(),
  });
  const served = await serveConsole(console, opts.port);
  announce(tools, console.issueLink(served.origin), 'this command', true);
  serveUntilStopped(served.close);
}

async function localConsole(tools: ConsoleCliTools, opts: ConsoleOptions): Promise<void> {
  const config = readLocalConfig();
  const host = await openConsole(tools.dataDir(), createLogger(), {
    embedder: () => createEmbedder({ provider: config.embeddings, bedrockModelId: config.bedrockModelId }),
    searchEventRetentionDays: config.searchEventRetentionDays,
    sourcesPrivateAddresses: config.sourcesPrivateAddresses,
    port: opts.port,
    onWait: (holder) => console.error(`waiting for ${holder} to finish…`),
  });
  const staying = host.servedBy === 'this command';
  announce(tools, host.link, host.servedBy, staying);
  if (staying) serveUntilStopped(host.close);
}

export function registerConsoleCommand(program: Command, tools: ConsoleCliTools): void {
  program
    .command('console')
    .description('print a single-use link to the owner console (review queue, records, keys, feedback, analytics) in a browser')
    .option('--port <n>', 'loopback port when this command serves the console (default: a free one)', tools.wholeNumber)
    .option('--mcp-url <url>', 'with --remote: the stack\'s MCP URL, shown in client set-ups for new keys')
    .action(async (opts: ConsoleOptions) => {
      const remote = tools.remote();
      await (remote ? remoteConsole(remote, tools, opts) : localConsole(tools, opts));
    });
}
