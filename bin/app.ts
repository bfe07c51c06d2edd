#!/usr/bin/env -S npx tsx
/**
 * The CDK app (`cdk.json` runs it): wiring only. Settings come from the
 * `chatctx:*` context values; see `lib/chatctx-app.ts`.
 */
import { App } from 'aws-cdk-lib';
import { configureApp } from '../lib/chatctx-app.ts';

configureApp(new App());
