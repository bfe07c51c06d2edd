// Loaded with `node --import` into a process under test: registers a module hook
// that names, on stderr, every package the process imports (`module-probe: <name>`),
// so a test can tell which packages a command really loaded.
import { register } from 'node:module';

register('./module-probe-hooks.mjs', import.meta.url);
