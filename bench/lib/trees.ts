/**
 * The trees the bench runs over and what it asks of each: the generated
 * monorepo (bench/gen-tree.ts) and the real trees made from the registries
 * (bench/real-trees.ts), with grep patterns chosen for each tree's language.
 */

export type TreeName = 'gen' | 'vendor' | 'npm' | 'mixed';
export const TREE_NAMES: readonly TreeName[] = ['gen', 'vendor', 'npm', 'mixed'];

export type CaseKind = 'literal' | 'regex' | 'no match' | '-i';

export interface GrepCase {
  kind: CaseKind | 'dense';
  pattern: string;
  literal?: boolean;
  ignoreCase?: boolean;
}

export interface TreeSpec {
  name: TreeName;
  /** What the tree is, for the report. */
  about: string;
  /**
   * The tree has a node_modules nothing ignores: grep rows run without it (natives'
   * default, rg/fd told to skip it) and with it (`includeNodeModules`, peers
   * unrestricted), and the listing sections (cached glob, every entry, fuzzy) include it.
   */
  nodeModules: boolean;
  /** Extension of the cached-glob row (`**\/*.<ext>`). */
  ext: string;
  /** literal, regex, never matching, case-insensitive: few matches each (the sparse rows). */
  cases: GrepCase[];
  /** A pattern with >= 200 000 matching lines, run with node_modules when the tree has one. */
  dense: GrepCase;
}

const NEVER: GrepCase = { kind: 'no match', pattern: 'zqxjkvbw_never_9' };

export const TREE_SPECS: Record<TreeName, Omit<TreeSpec, 'name'>> = {
  gen: {
    about: 'generated TypeScript monorepo (bench/gen-tree.ts), its own git repository with .gitignore, .ignore, hidden dirs, an ignored node_modules and a large .git',
    nodeModules: false,
    ext: 'ts',
    cases: [
      { kind: 'literal', pattern: 'resolveWorkspaceRoot', literal: true },
      { kind: 'regex', pattern: 'fetchUser[A-Z]\\w*' },
      NEVER,
      { kind: '-i', pattern: 'resolveworkspaceroot', ignoreCase: true },
    ],
    dense: { kind: 'dense', pattern: 'const', literal: true },
  },
  vendor: {
    about: '`cargo vendor` of pinned popular crates (bench/real-trees/vendor), no git',
    nodeModules: false,
    ext: 'rs',
    cases: [
      { kind: 'literal', pattern: 'unsafe impl', literal: true },
      { kind: 'regex', pattern: 'fn [a-z_]+_mut\\(' },
      NEVER,
      { kind: '-i', pattern: 'todo', ignoreCase: true },
    ],
    dense: { kind: 'dense', pattern: 'self', literal: true },
  },
  npm: {
    about: '`npm ci --ignore-scripts` of pinned large packages (bench/real-trees/npm), no git, no .gitignore: node_modules is the tree',
    nodeModules: true,
    ext: 'js',
    cases: [
      { kind: 'literal', pattern: 'Symbol.iterator', literal: true },
      { kind: 'regex', pattern: 'function [A-Z]\\w*\\(' },
      NEVER,
      { kind: '-i', pattern: 'todo', ignoreCase: true },
    ],
    dense: { kind: 'dense', pattern: 'return|this' },
  },
  mixed: {
    about: 'the vendor tree plus the npm tree\'s node_modules (hard links), no git: sources beside a node_modules nothing ignores',
    nodeModules: true,
    ext: 'rs',
    cases: [
      { kind: 'literal', pattern: 'TODO', literal: true },
      { kind: 'regex', pattern: 'fn [a-z_]+_mut\\(|function [A-Z]\\w*\\(' },
      NEVER,
      { kind: '-i', pattern: 'deprecated', ignoreCase: true },
    ],
    dense: { kind: 'dense', pattern: 'self', literal: true },
  },
};
