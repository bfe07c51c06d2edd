// Thread entry of the store's own thread: loader hooks do not cross threads, so
// register tsx here and then load the TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./pglite-thread.ts');
