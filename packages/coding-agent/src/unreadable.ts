/**
 * The note a search tool adds when its answer is partial: the paths natives could not enter or read
 * (a directory without permission, a path longer than the system allows, a file that vanished or
 * could not be opened), each with why, so a model never takes a partial answer for a whole one.
 * A few are named; the rest are counted, so the note stays short whatever the tree holds.
 */
import type { UnreadablePath } from '@natives/natives';
import { Type } from '@sinclair/typebox';

/** Paths the note names; the others are counted. */
export const UNREADABLE_NAMED = 5;

/** What a tool's details say of the unreadable paths: how many, and the named ones as shown. */
export interface UnreadableDetails {
  unreadable: number;
  unreadablePaths: { path: string; code: string }[];
}

/** The schema of {@link UnreadableDetails}, for a tool's details schema. */
export const UnreadableDetailsSchema = {
  unreadable: Type.Integer({ description: 'Paths the search could not enter or read, so results there are missing.' }),
  unreadablePaths: Type.Array(Type.Object({ path: Type.String(), code: Type.String() }), {
    description: `The first ${UNREADABLE_NAMED} of them, relative to the working directory, with why (a code such as EACCES).`,
  }),
};

/** The note naming `unreadable` (paths shown with `display`), or `''` when there is none. */
export function unreadableNote(unreadable: readonly UnreadablePath[], display: (rel: string) => string): string {
  if (unreadable.length === 0) return '';
  const named = unreadable.slice(0, UNREADABLE_NAMED).map((u) => `${display(u.path)} (${u.message})`);
  const more = unreadable.length > UNREADABLE_NAMED ? `; and ${unreadable.length - UNREADABLE_NAMED} more` : '';
  const paths = unreadable.length === 1 ? '1 path' : `${unreadable.length} paths`;
  return `[Could not read ${paths}, so results there are missing: ${named.join('; ')}${more}.]`;
}

/** The details of `unreadable`: the count, and the paths the note names (shown with `display`). */
export function unreadableDetails(unreadable: readonly UnreadablePath[], display: (rel: string) => string): UnreadableDetails {
  return {
    unreadable: unreadable.length,
    unreadablePaths: unreadable.slice(0, UNREADABLE_NAMED).map((u) => ({ path: display(u.path), code: u.code })),
  };
}
