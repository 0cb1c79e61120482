/**
 * `@path` mentions in a message, resolved to files and directories.
 *
 * Grammar ({@link parseFileMentions}):
 * - a mention starts with `@` at the start of the text or right after
 *   whitespace or one of `( [ { < " ' \` , ; :`. An `@` after a letter, digit
 *   or other character is not a mention, so e-mail addresses (`me@host.org`)
 *   are not;
 * - then either a quoted path, `@"docs/release notes.md"` (anything up to the
 *   next `"` on the same line), or a run of characters other than whitespace
 *   and `` " ' ` < > ( ) , ; `` whose first character is not `@`;
 * - trailing `. , : ; ! ?` are stripped from a run, and so is a trailing `]`
 *   or `}` without a partner in it (`@pages/[id].tsx` keeps its brackets;
 *   `[see @a.ts]` does not take the `]`). A run left empty is not a mention;
 * - a mention that occurs twice is reported once, at its first occurrence.
 *
 * Resolution ({@link resolveFileMentions}), first rule that answers wins:
 * 1. **exact**: the mention, relative to `cwd` (or absolute), is an existing
 *    file or directory, whatever ignore rules say;
 * 2. **glob**: natives `glob` under `cwd` with the mention as the pattern if
 *    it has glob characters (`* ? [ {`), else as `**\/<mention>` (a name or
 *    path tail at any depth); a trailing `/` asks for a directory. Exactly
 *    one match resolves; several are ambiguous (`how: 'none'`, listed in
 *    `candidates`, shallowest first);
 * 3. **fuzzy**: natives `fuzzyFind` with the mention as the query. The top
 *    match is taken when it is clearly best: it ranks in a strictly better
 *    tier than the runner-up (or is the only match), and that tier is better
 *    than "letters scattered across the path". Otherwise nothing is
 *    resolved and the top matches are the candidates.
 * Mentions that are absolute or climb out with `..` only get rule 1.
 *
 * Steps 2 and 3 use the mention profile (`MENTION_SCAN_PROFILE`): dot-files included,
 * `.gitignore` honoured, `node_modules` included, and the shared scan cache
 * (`cache: true`); mutating tools invalidate it, so a file an agent just
 * wrote is found.
 */
import * as fs from 'node:fs/promises';
import * as nodePath from 'node:path';
import { FileType, type FuzzyMatch, type FuzzyTier, fuzzyFind, glob } from '@natives/natives';
import { resolvePath } from './names.ts';
import { SEARCH_DOT_FILES } from './files.ts';
import { displayPath } from './tool.ts';

/** Candidates returned per mention when `maxCandidates` is not given. */
export const DEFAULT_MENTION_CANDIDATES = 5;

/** Fuzzy tiers, best first: a top match must be in a strictly better tier than the runner-up. */
const FUZZY_TIERS: readonly FuzzyTier[] = ['exactName', 'namePrefix', 'nameSubstring', 'pathSubstring', 'nameScattered', 'scattered'];

/** The scan policy every discovery step of mention resolution uses. */
export const MENTION_SCAN_PROFILE = { hidden: SEARCH_DOT_FILES, gitignore: true, includeNodeModules: true, cache: true } as const;

/** A mention found in a text. */
export interface ParsedMention {
  /** The mentioned path, without `@`, quotes or trailing punctuation. */
  mention: string;
  /** Offset of the `@` in the text. */
  start: number;
  /** Offset just past the mention (trailing punctuation excluded). */
  end: number;
}

/** How a mention was resolved. */
export type MentionResolution = 'exact' | 'glob' | 'fuzzy' | 'none';

/** A resolved (or unresolved) mention. */
export interface FileMention extends ParsedMention {
  /** The path it resolved to, relative to `cwd` when inside it, `/`-separated; directories end with `/`. `null` when unresolved. */
  resolved: string | null;
  /** The absolute path it resolved to, or `null`. */
  absolutePath: string | null;
  /** What `resolved` is, or `null`. */
  kind: 'file' | 'dir' | null;
  /** Which rule resolved it; `'none'` exactly when `resolved` is `null`. */
  how: MentionResolution;
  /**
   * Paths (as `resolved`) the mention could mean: the resolved path first
   * when there is one, then the alternatives the rule saw. With `how:
   * 'none'`, non-empty means the mention was ambiguous or inexact.
   */
  candidates: string[];
}

export interface ResolveMentionsOptions {
  /** Mentions resolve against this directory. */
  cwd: string;
  /** At most this many candidates per mention. Default {@link DEFAULT_MENTION_CANDIDATES}. */
  maxCandidates?: number;
  signal?: AbortSignal;
}

const BEFORE_MENTION = /[\s([{<"'`,;:]/;
const RUN_CHAR = /[^\s"'`<>(),;]/;
const TRAILING_PUNCTUATION = '.,:;!?';

/** The `@` mentions in `text`, in order of first occurrence (see the module comment for the grammar). */
export function parseFileMentions(text: string): ParsedMention[] {
  const found: ParsedMention[] = [];
  const seen = new Set<string>();
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    if (at > 0 && !BEFORE_MENTION.test(text[at - 1]!)) continue;
    let mention: string;
    let end: number;
    if (text[at + 1] === '"') {
      const close = text.indexOf('"', at + 2);
      if (close === -1) continue;
      mention = text.slice(at + 2, close);
      if (mention.includes('\n')) continue;
      end = close + 1;
    } else {
      let stop = at + 1;
      while (stop < text.length && RUN_CHAR.test(text[stop]!)) stop++;
      mention = stripTrailing(text.slice(at + 1, stop));
      if (mention.startsWith('@')) continue;
      end = at + 1 + mention.length;
    }
    if (mention.trim() === '' || seen.has(mention)) continue;
    seen.add(mention);
    found.push({ mention, start: at, end });
  }
  return found;
}

function stripTrailing(run: string): string {
  for (;;) {
    const last = run.at(-1);
    if (last === undefined) return run;
    if (TRAILING_PUNCTUATION.includes(last)) {
      run = run.slice(0, -1);
      continue;
    }
    const open = last === ']' ? '[' : last === '}' ? '{' : undefined;
    if (open !== undefined && occurrences(run, last) > occurrences(run, open)) {
      run = run.slice(0, -1);
      continue;
    }
    return run;
  }
}

function occurrences(s: string, ch: string): number {
  return s.split(ch).length - 1;
}

/** Find the mentions in `text` and resolve each (see the module comment for the rules). */
export async function resolveFileMentions(text: string, options: ResolveMentionsOptions): Promise<FileMention[]> {
  const out: FileMention[] = [];
  for (const parsed of parseFileMentions(text)) out.push(await resolveMention(parsed, options));
  return out;
}

/** Resolve one mention (the `@` already removed). */
export async function resolveMention(parsed: ParsedMention, options: ResolveMentionsOptions): Promise<FileMention> {
  const answer = new Answer(parsed, nodePath.resolve(options.cwd), options.maxCandidates ?? DEFAULT_MENTION_CANDIDATES);
  const mention = parsed.mention;
  const exact = await existingKind(nodePath.resolve(answer.cwd, mention));
  if (exact) return answer.resolved('exact', mention, exact, []);
  const relative = mention.replace(/^(\.\/)+/, '');
  if (nodePath.isAbsolute(mention) || relative.split(/[\\/]/).includes('..') || relative.replace(/\/+$/, '') === '') return answer.unresolved();
  return (await byGlob(answer, relative, options.signal)) ?? byFuzzy(answer, relative, options.signal);
}

/** How a mention's answer is shaped: resolved to one path, or not, with candidates. */
class Answer {
  constructor(
    private readonly parsed: ParsedMention,
    readonly cwd: string,
    readonly maxCandidates: number,
  ) {}

  unresolved(candidates: string[] = []): FileMention {
    return { ...this.parsed, resolved: null, absolutePath: null, kind: null, how: 'none', candidates: candidates.slice(0, this.maxCandidates) };
  }

  resolved(how: MentionResolution, rel: string, kind: 'file' | 'dir', others: string[]): FileMention {
    // By the text (names.ts): node:path would turn the escapes of a name that is not UTF-8 into U+FFFD.
    const absolutePath = resolvePath(this.cwd, rel);
    const shown = this.show(rel, kind);
    const candidates = [shown, ...others.filter((c) => c !== shown)].slice(0, this.maxCandidates);
    return { ...this.parsed, resolved: shown, absolutePath, kind, how, candidates };
  }

  show(rel: string, kind: 'file' | 'dir'): string {
    return show(this.cwd, resolvePath(this.cwd, rel), kind);
  }
}

/** What exists at `abs`, if anything. */
async function existingKind(abs: string): Promise<'file' | 'dir' | undefined> {
  try {
    return (await fs.stat(abs)).isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

/** A unique glob match resolves; several are the candidates; none (or a mention that is no glob) falls through. */
async function byGlob(answer: Answer, relative: string, signal: AbortSignal | undefined): Promise<FileMention | undefined> {
  const wantsDir = relative.endsWith('/');
  const bare = relative.replace(/\/+$/, '');
  const pattern = /[*?[{]/.test(bare) ? bare : `**/${bare}`;
  let found;
  try {
    found = await glob({ pattern, path: answer.cwd, ...MENTION_SCAN_PROFILE, fileType: wantsDir ? FileType.Dir : undefined, signal });
  } catch (error) {
    // A mention that is not a valid glob goes on to fuzzy matching; anything else (an abort) is the caller's.
    if ((error as { code?: unknown }).code !== 'EINVAL') throw error;
    return undefined;
  }
  const matches = found.matches
    .filter((m) => m.fileType === FileType.File || m.fileType === FileType.Dir)
    .sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const kindOf = (m: (typeof matches)[number]) => (m.fileType === FileType.Dir ? 'dir' : 'file');
  if (matches.length === 1) return answer.resolved('glob', matches[0]!.path, kindOf(matches[0]!), []);
  if (matches.length > 1) return answer.unresolved(matches.map((m) => answer.show(m.path, kindOf(m))));
  return undefined;
}

/** The best fuzzy match resolves when it is clearly best (a better tier than the next, never `scattered`). */
async function byFuzzy(answer: Answer, relative: string, signal: AbortSignal | undefined): Promise<FileMention> {
  const fuzzy = await fuzzyFind({ query: relative, path: answer.cwd, ...MENTION_SCAN_PROFILE, maxResults: Math.max(answer.maxCandidates, 2), signal });
  const kindOf = (m: FuzzyMatch): 'file' | 'dir' => (m.path.endsWith('/') ? 'dir' : 'file');
  const candidates = fuzzy.matches.map((m) => answer.show(m.path, kindOf(m)));
  const [top, second] = fuzzy.matches;
  if (top && top.tier !== 'scattered' && (second === undefined || rank(top) < rank(second))) {
    return answer.resolved('fuzzy', top.path, kindOf(top), candidates);
  }
  return answer.unresolved(candidates);
}

/** Position of a match's tier, 0 best. */
function rank(match: FuzzyMatch): number {
  return FUZZY_TIERS.indexOf(match.tier);
}

function depth(rel: string): number {
  return rel.split('/').length;
}

/** `abs` relative to `cwd` when inside it, `/`-separated, directories with a trailing `/`. */
function show(cwd: string, abs: string, kind: 'file' | 'dir'): string {
  return displayPath({ cwd }, abs, kind === 'dir');
}
