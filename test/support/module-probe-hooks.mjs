// The hook that module-probe.mjs registers: each resolved module inside a package
// is reported once per package, by the package's name.
const seen = new Set();

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(resolved.url)?.[1];
  if (name && !seen.has(name)) {
    seen.add(name);
    process.stderr.write(`module-probe: ${name}\n`);
  }
  return resolved;
}
