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
if (folder) {
  await import(pathToFileURL(`${folder}/bin/chatctx.js`).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./chatctx.ts');
}
