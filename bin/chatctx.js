#!/usr/bin/env node
// Entry point of the `chatctx` command. It runs the CLI compiled ahead into
// `.build/` (see build/build.mjs), compiling first when a source changed since, so a
// command starts as plain JavaScript. Without esbuild (an install without dev
// dependencies) it runs the TypeScript sources through tsx instead, more slowly.
import { pathToFileURL } from 'node:url';
import { build, currentBuild } from './build/build.mjs';

let folder = currentBuild();
if (!folder) {
  try {
    folder = await build();
  } catch {
    folder = undefined;
  }
}
// `serve` starts the store's and the encoder's threads before loading the rest, so that
// their work begins on another core while this one loads the server (lambdas/local/serve-head-start.ts).
// The command is the first argument that is neither an option nor the value of one.
const args = process.argv.slice(2);
const serving = args.find((arg, i) => !arg.startsWith('-') && !['--data-dir', '--remote'].includes(args[i - 1])) === 'serve';
if (folder) {
  if (serving) (await import(pathToFileURL(`${folder}/lambdas/local/serve-head-start.js`).href)).startServeThreads();
  await import(pathToFileURL(`${folder}/bin/chatctx.js`).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  if (serving) (await import('../lambdas/local/serve-head-start.ts')).startServeThreads();
  await import('./chatctx.ts');
}
