/**
 * How every chatctx Lambda is bundled: one place for the esbuild options, so the
 * functions and the bundling test (`test/cdk/bundling.test.ts`) build with the same
 * settings. This module only describes bundling; `lambda-function.ts` applies it.
 *
 * - ESM output (`index.mjs`) for Node 22, minified, with source maps (the functions
 *   run with `--enable-source-maps`, so stack traces point at the TypeScript).
 * - `mainFields: ['module', 'main']` picks the ESM builds of dependencies, which
 *   tree-shake better; the banner gives CommonJS dependencies that still call
 *   `require` a working one inside the ESM bundle.
 * - The AWS SDK v3 clients are bundled, not left external to the runtime's copy:
 *   `package.json` pins their versions and the deployed code must run exactly what
 *   the tests ran. The Lambda-provided SDK changes under us with runtime updates.
 * - Local esbuild only (`forceDockerBundling: false`): esbuild is a dev dependency,
 *   so synth needs no Docker.
 */
import { fileURLToPath } from 'node:url';
import { OutputFormat, type BundlingOptions, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';

/** Absolute path of the repository root (the folder holding package-lock.json). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/** The Node.js version the bundles target; keep in step with the functions' runtime. */
export const NODE_TARGET = 'node22';

/** Makes `require` available to CommonJS code inside the ESM bundle. */
export const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** The esbuild options shared by every chatctx function (without command hooks). */
export const BUNDLING_OPTIONS = {
  format: OutputFormat.ESM,
  target: NODE_TARGET,
  minify: true,
  sourceMap: true,
  // The maps only need line mappings for stack traces; sources would double the upload.
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  // Nothing is external: see the module comment (the SDK clients are bundled and pinned).
  externalModules: [],
  forceDockerBundling: false,
} as const satisfies BundlingOptions;

/**
 * The bundling options for one function.
 *
 * @param commandHooks extra shell commands around esbuild, e.g. to copy data files
 *   the function reads at run time into the bundle.
 */
export function bundlingOptions(commandHooks?: ICommandHooks): BundlingOptions {
  return {
    ...BUNDLING_OPTIONS,
    mainFields: [...BUNDLING_OPTIONS.mainFields],
    externalModules: [...BUNDLING_OPTIONS.externalModules],
    ...(commandHooks ? { commandHooks } : {}),
  };
}

/**
 * Command hooks that copy files matching `sourceGlob` (relative to the project root)
 * into `targetDir` (relative to the bundle root) after esbuild has run.
 *
 * @param sourceGlob e.g. `schema/*.sql`
 * @param targetDir e.g. `schema`, or `.` for the bundle root
 */
export function copyFilesAfterBundling(sourceGlob: string, targetDir: string): ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) => [
      `mkdir -p "${outputDir}/${targetDir}" && cp "${inputDir}"/${sourceGlob} "${outputDir}/${targetDir}/"`,
    ],
  };
}

/**
 * Command hooks that bundle the package `moduleName` on its own, into
 * `node_modules/<moduleName>` beside the function's bundle, for code that imports
 * it by a name the main bundle does not follow (see `lambdas/retrieval/token-budget.ts`):
 * Node resolves it from there at first use, so a large dependency needed by few
 * requests is not parsed at every cold start.
 */
export function bundleModuleBeside(moduleName: string): ICommandHooks {
  const manifest = JSON.stringify({ name: moduleName, type: 'module', main: 'index.mjs' });
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) => {
      const target = `${outputDir}/node_modules/${moduleName}`;
      return [
        `mkdir -p "${target}" && cd "${inputDir}" && echo "export * from '${moduleName}';" | ` +
          `npx --no-install esbuild --bundle --platform=node --format=esm --target=${NODE_TARGET} --minify --log-level=warning --outfile="${target}/index.mjs"`,
        `echo '${manifest}' > "${target}/package.json"`,
      ];
    },
  };
}
