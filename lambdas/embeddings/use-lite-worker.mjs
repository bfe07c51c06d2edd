// Worker thread entry: loader hooks do not cross threads, so register tsx here and
// then load the TypeScript worker body.
import { register } from 'tsx/esm/api';

register();
await import('./use-lite-worker.ts');
