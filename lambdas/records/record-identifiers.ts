/**
 * Record identifiers as the statements take them, so every lookup by id or slug
 * reaches its index: an id is compared as a uuid with the primary key, never as
 * text (`id::text = …` cannot use the index and reads the whole table), and a
 * slug with the slug's unique index.
 *
 * An identifier is an id only when it is a well-formed uuid; anything else is
 * simply not an id (it may still be a slug). Ids are compared in lower case, the
 * form Postgres prints them in.
 *
 * Sets of identifiers travel as one JSON array parameter and are turned into a
 * Postgres array in the statement (`= ANY (ARRAY(SELECT …))`): the planner then
 * probes the index once per element whatever size it guesses for the set, where
 * a join or `IN (SELECT …)` against the set could make it read the whole table.
 */
import { asUuid } from '../storage/uuid-text.ts';

/** The identifier as a record id (lower-case uuid), or null when it cannot be one. */
export const asRecordId = (identifier: string): string | null => asUuid(identifier);

/** The identifiers that can be record ids, as the JSON array parameter `uuidSet` reads. */
export function recordIdsParam(identifiers: readonly string[]): string {
  return JSON.stringify(identifiers.flatMap((i) => asRecordId(i) ?? []));
}

/** SQL: the uuids in JSON array parameter `$n`, as an array for `col = ANY (…)`. */
export const uuidSet = (n: number) => `ARRAY(SELECT jsonb_array_elements_text($${n}::jsonb)::uuid)`;

/** SQL: the strings in JSON array parameter `$n`, as an array for `col = ANY (…)`. */
export const textSet = (n: number) => `ARRAY(SELECT jsonb_array_elements_text($${n}::jsonb))`;

/** SQL: the `field` of each object in JSON array parameter `$n`, as a uuid array for `col = ANY (…)`. */
export const uuidFieldSet = (n: number, field: string) => `ARRAY(SELECT (e ->> '${field}')::uuid FROM jsonb_array_elements($${n}::jsonb) e)`;

/** SQL: the `field` of each object in JSON array parameter `$n`, as a text array for `col = ANY (…)`. */
export const textFieldSet = (n: number, field: string) => `ARRAY(SELECT e ->> '${field}' FROM jsonb_array_elements($${n}::jsonb) e)`;
