/**
 * A loader that runs once and shares its result with every caller, concurrent ones
 * included. A failed load is forgotten, so the next call tries again: a pepper file
 * restored from a backup, or a model that failed to load once, is picked up
 * without a restart.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    if (!loading) {
      const attempt = load();
      loading = attempt;
      attempt.catch(() => {
        if (loading === attempt) loading = undefined;
      });
    }
    return loading;
  };
}
