#!/usr/bin/env node
// Entry point of the `chatctx` command: registers the TypeScript loader, then runs
// the CLI. The project ships TypeScript sources and runs them without a build step.
import { register } from 'tsx/esm/api';

register();
await import('./chatctx.ts');
