// Compiles the CLI and the local runtime ahead of time, into `.build/`, so a
// `chatctx` command starts as plain JavaScript instead of compiling TypeScript on
// every call. One JavaScript file per TypeScript file, same layout, so the paths
// the code resolves from its own location (the starter corpus, the migrations, the
// documentation prose, the worker threads' entries) still lead to the same places.
//
// Each build goes into its own folder, `.build/<id>/`, and `.build/current` names
// the newest; a build is never changed or removed while a command may be running
// from it (old ones go after ten minutes). `currentBuild()` returns the folder only
// when no source is newer than it, so an edited tree never runs stale code. Runs
// from `npm start` and `npm test` (through ensure-deps) and, when needed, from
// `bin/chatctx.js`.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUILDS = join(ROOT, '.build');
const CURRENT = join(BUILDS, 'current');
/** What the CLI runs besides its own files: the core, and the tool schemas. */
const SOURCES = ['lambdas', 'schema'];
const KEEP_OLD_BUILDS_MS = 10 * 60 * 1000;

function walk(dir, out = [], deep = true) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (deep && entry.name !== 'node_modules') walk(path, out);
    } else out.push(path);
  }
  return out;
}

// The CLI is the files at the top of bin/; its folders hold scripts that npm runs from
// the sources, so they are neither compiled nor a reason to compile again.
const sources = () => [...walk(join(ROOT, 'bin'), [], false), ...SOURCES.flatMap((folder) => walk(join(ROOT, folder)))];
const newestSource = () => Math.max(...sources().map((file) => statSync(file).mtimeMs));

/** The folder of a build that is complete and newer than every source, or undefined. */
export function currentBuild() {
  let id;
  try {
    id = readFileSync(CURRENT, 'utf8').trim();
  } catch {
    return undefined;
  }
  const folder = join(BUILDS, id);
  const stamp = join(folder, '.complete');
  if (!existsSync(stamp)) return undefined;
  return statSync(stamp).mtimeMs >= newestSource() ? folder : undefined;
}

/** Rewrites relative `.ts` specifiers to `.js` in compiled output (static and dynamic imports). */
function rewriteImports(code) {
  return code.replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g, '$1$2.js$3');
}

// The target is the oldest Node.js the package supports (`engines`): with plain
// `node20` esbuild drops the `with { type: 'json' }` attribute that the policy
// file's import needs, and Node refuses the import without it.
async function compile(file, target, transform) {
  mkdirSync(dirname(target), { recursive: true });
  if (file.endsWith('.ts')) {
    const { code } = await transform(readFileSync(file, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20.11', sourcefile: file });
    writeFileSync(target.replace(/\.ts$/, '.js'), rewriteImports(code));
  } else if (file.endsWith('.mjs')) {
    // A thread entry registers the TypeScript loader, then loads its body; here the body is already JavaScript.
    const body = /import\(['"]\.\/([\w-]+)\.ts['"]\)/.exec(readFileSync(file, 'utf8'))?.[1];
    writeFileSync(target, body ? `await import('./${body}.js');\n` : readFileSync(file, 'utf8'));
  } else if ((!file.endsWith('.js') && !file.endsWith('.sh')) || file.split(/[\\/]/).includes('assets')) {
    // Files a browser loads (the console's script) are copied as they are.
    copyFileSync(file, target);
  }
}

/** Compiles every source into a new build folder and makes it the current one; returns the folder. */
export async function build() {
  const { transform } = await import('esbuild');
  const id = `${Date.now()}-${process.pid}`;
  const folder = join(BUILDS, id);
  for (const file of sources()) await compile(file, join(folder, relative(ROOT, file)), transform);
  // `chatctx --version` reads the package's version beside the compiled tree too.
  copyFileSync(join(ROOT, 'package.json'), join(folder, 'package.json'));
  // The starter corpus is read from the tree, not copied.
  symlinkSync(join(ROOT, 'guidance'), join(folder, 'guidance'), 'dir');
  writeFileSync(join(folder, '.complete'), new Date().toISOString() + '\n');
  const pointer = `${CURRENT}-${process.pid}`;
  writeFileSync(pointer, id + '\n');
  renameSync(pointer, CURRENT);
  for (const name of readdirSync(BUILDS)) {
    const old = join(BUILDS, name);
    if (name !== id && name !== 'current' && Date.now() - statSync(old).mtimeMs > KEEP_OLD_BUILDS_MS) rmSync(old, { recursive: true, force: true });
  }
  return folder;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = performance.now();
  await build();
  console.error(`Compiled the CLI into .build/ (${Math.round(performance.now() - started)} ms).`);
}
