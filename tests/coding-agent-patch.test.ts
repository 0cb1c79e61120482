/**
 * Parsing unified diffs as git writes them: every `diff --git` section is
 * parsed whole (renames with and without hunks, names with spaces,
 * C-quoted names, mode lines), what is not supported refuses the whole
 * patch naming the file, and no section is ever parsed then skipped. The
 * end-to-end tests apply such patches through `edit`.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyFilePatch, editTool, parsePatch, type FilePatch, type ToolContext } from '../packages/coding-agent/src/index.ts';
import { PatchError } from '../packages/coding-agent/src/patch.ts';
import { LineIndex, searchBudget } from '../packages/coding-agent/src/placement.ts';
import { expectError, expectOk } from './support/agent.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';

/** The fields of a parsed file patch a test compares; `hunks` is their count. */
interface Summary {
  oldPath: string | undefined;
  newPath: string | undefined;
  rename: boolean;
  newMode?: number;
  hunks: number;
}

function summarise(file: FilePatch): Summary {
  const summary: Summary = { oldPath: file.oldPath, newPath: file.newPath, rename: file.rename, hunks: file.hunks.length };
  if (file.newMode !== undefined) summary.newMode = file.newMode;
  return summary;
}

const lines = (...parts: string[]) => parts.join('\n') + '\n';
const renameOnly = (from: string, to: string) => lines(`diff --git a/${from} b/${to}`, 'similarity index 100%', `rename from ${from}`, `rename to ${to}`);

describe('parsePatch: what each section records', () => {
  const cases: [string, string, Summary[]][] = [
    ['a plain modification', lines('--- a/x.txt', '+++ b/x.txt', '@@ -1 +1 @@', '-a', '+b'), [{ oldPath: 'x.txt', newPath: 'x.txt', rename: false, hunks: 1 }]],
    ['a plain creation and deletion', lines('--- /dev/null', '+++ b/new.txt', '@@ -0,0 +1 @@', '+n', '--- a/old.txt', '+++ /dev/null', '@@ -1 +0,0 @@', '-o'), [
      { oldPath: undefined, newPath: 'new.txt', rename: false, hunks: 1 },
      { oldPath: 'old.txt', newPath: undefined, rename: false, hunks: 1 },
    ]],
    ['a rename without hunks, names with spaces', renameOnly('my file.txt', 'your file.txt'), [{ oldPath: 'my file.txt', newPath: 'your file.txt', rename: true, hunks: 0 }]],
    ['a rename with hunks, names with spaces and the tab git appends to them', lines(
      'diff --git a/my file.txt b/new name.txt', 'similarity index 80%', 'rename from my file.txt', 'rename to new name.txt', 'index 1111111..2222222 100644',
      '--- a/my file.txt\t', '+++ b/new name.txt\t', '@@ -1 +1 @@', '-a', '+b',
    ), [{ oldPath: 'my file.txt', newPath: 'new name.txt', rename: true, hunks: 1 }]],
    ['a mode change without hunks, a name with spaces', lines('diff --git a/my script.sh b/my script.sh', 'old mode 100644', 'new mode 100755'), [
      { oldPath: 'my script.sh', newPath: 'my script.sh', rename: false, newMode: 0o100755, hunks: 0 },
    ]],
    ['a mode change without prefixes', lines('diff --git my script.sh my script.sh', 'old mode 100755', 'new mode 100644'), [
      { oldPath: 'my script.sh', newPath: 'my script.sh', rename: false, newMode: 0o100644, hunks: 0 },
    ]],
    ['a mode change with hunks', lines('diff --git a/run.sh b/run.sh', 'old mode 100644', 'new mode 100755', 'index 1111111..2222222', '--- a/run.sh', '+++ b/run.sh', '@@ -1 +1 @@', '-a', '+b'), [
      { oldPath: 'run.sh', newPath: 'run.sh', rename: false, newMode: 0o100755, hunks: 1 },
    ]],
    ['a new empty file', lines('diff --git a/empty file b/empty file', 'new file mode 100644', 'index 0000000..e69de29'), [
      { oldPath: undefined, newPath: 'empty file', rename: false, newMode: 0o100644, hunks: 0 },
    ]],
    ['a deleted empty file', lines('diff --git a/gone b/gone', 'deleted file mode 100644', 'index e69de29..0000000'), [{ oldPath: 'gone', newPath: undefined, rename: false, hunks: 0 }]],
    ['a new executable with hunks', lines('diff --git a/run.sh b/run.sh', 'new file mode 100755', 'index 0000000..1111111', '--- /dev/null', '+++ b/run.sh', '@@ -0,0 +1 @@', '+echo'), [
      { oldPath: undefined, newPath: 'run.sh', rename: false, newMode: 0o100755, hunks: 1 },
    ]],
    ['C-quoted names in every header line (with the tab git appends to names with spaces)', lines(
      'diff --git "a/t\\303\\251st \\"q\\".txt" "b/t\\303\\251st \\"r\\".txt"', 'similarity index 90%', 'rename from "t\\303\\251st \\"q\\".txt"', 'rename to "t\\303\\251st \\"r\\".txt"',
      '--- "a/t\\303\\251st \\"q\\".txt"\t', '+++ "b/t\\303\\251st \\"r\\".txt"\t', '@@ -1 +1 @@', '-a', '+b',
    ), [{ oldPath: 't\u00e9st "q".txt', newPath: 't\u00e9st "r".txt', rename: true, hunks: 1 }]],
    ['C-quoted tab, newline and backslash', lines('diff --git "a/t\\tb\\nc\\\\d" "b/t\\tb\\nc\\\\d"', 'new file mode 100644', '--- /dev/null', '+++ "b/t\\tb\\nc\\\\d"', '@@ -0,0 +1 @@', '+x'), [
      { oldPath: undefined, newPath: 't\tb\nc\\d', rename: false, newMode: 0o100644, hunks: 1 },
    ]],
    ['one name quoted, the other not', lines('diff --git a/plain.txt "b/\\303\\251.txt"', 'rename from plain.txt', 'rename to "\\303\\251.txt"'), [
      { oldPath: 'plain.txt', newPath: '\u00e9.txt', rename: true, hunks: 0 },
    ]],
    ['a header-only section between two others', lines(
      '--- a/one.txt', '+++ b/one.txt', '@@ -1 +1 @@', '-a', '+b',
      'diff --git a/old name.txt b/new name.txt', 'similarity index 100%', 'rename from old name.txt', 'rename to new name.txt',
      'diff --git a/two.txt b/two.txt', '--- a/two.txt', '+++ b/two.txt', '@@ -1 +1 @@', '-c', '+d',
    ), [
      { oldPath: 'one.txt', newPath: 'one.txt', rename: false, hunks: 1 },
      { oldPath: 'old name.txt', newPath: 'new name.txt', rename: true, hunks: 0 },
      { oldPath: 'two.txt', newPath: 'two.txt', rename: false, hunks: 1 },
    ]],
    ['a commit message before the first section is not a section', lines('From 1234 Mon Sep 17 00:00:00 2001', 'Subject: [PATCH] x', '', '---', ' x.txt | 2 +-', '', 'diff --git a/x.txt b/x.txt', 'index 1..2 100644', '--- a/x.txt', '+++ b/x.txt', '@@ -1 +1 @@', '-a', '+b'), [
      { oldPath: 'x.txt', newPath: 'x.txt', rename: false, hunks: 1 },
    ]],
  ];
  test.each(cases)('%s', (_name, patch, expected) => {
    expect(parsePatch(patch).map(summarise)).toEqual(expected);
  });

  test('a rename-only section mixed with a modification of another file yields both', () => {
    const patch = renameOnly('my file.txt', 'moved file.txt') + lines('diff --git a/other.txt b/other.txt', 'index 1..2 100644', '--- a/other.txt', '+++ b/other.txt', '@@ -1 +1 @@', '-a', '+b');
    expect(parsePatch(patch).map(summarise)).toEqual([
      { oldPath: 'my file.txt', newPath: 'moved file.txt', rename: true, hunks: 0 },
      { oldPath: 'other.txt', newPath: 'other.txt', rename: false, hunks: 1 },
    ]);
  });
});

describe('parsePatch: what refuses the whole patch', () => {
  const modify = lines('--- a/ok.txt', '+++ b/ok.txt', '@@ -1 +1 @@', '-a', '+b');
  const cases: [string, string, string][] = [
    ['a git binary patch', lines('diff --git a/img.png b/img.png', 'index 1111111..2222222 100644', 'GIT binary patch', 'literal 5', 'McmZ?wbaG(;0ssL3'), 'binary diffs are not supported (img.png)'],
    ['"Binary files ... differ" in a git section', lines('diff --git a/x.bin b/x.bin', 'index 1111111..2222222 100644', 'Binary files a/x.bin and b/x.bin differ'), 'binary diffs are not supported (x.bin)'],
    ['"Binary files ... differ" outside a git section', 'Binary files a/x.bin and b/x.bin differ\n', 'binary diffs are not supported (x.bin)'],
    ['a new symlink', lines('diff --git a/link b/link', 'new file mode 120000', '--- /dev/null', '+++ b/link', '@@ -0,0 +1 @@', '+target', '\\ No newline at end of file'), 'symbolic links are not supported (link)'],
    ['a symlink changed (mode only on the index line)', lines('diff --git a/link b/link', 'index 1111111..2222222 120000', '--- a/link', '+++ b/link', '@@ -1 +1 @@', '-a', '+b'), 'symbolic links are not supported (link)'],
    ['a file turned into a symlink', lines('diff --git a/f b/f', 'old mode 100644', 'new mode 120000'), 'symbolic links are not supported (f)'],
    ['a submodule', lines('diff --git a/sub b/sub', 'index 1111111..2222222 160000', '--- a/sub', '+++ b/sub', '@@ -1 +1 @@', '-Subproject commit 1', '+Subproject commit 2'), 'submodules are not supported (sub)'],
    ['a directory mode', lines('diff --git a/d b/d', 'new file mode 040000'), 'unsupported file mode 040000 (d)'],
    ['a malformed mode', lines('diff --git a/d b/d', 'new file mode 10064'), 'malformed mode "10064"'],
    ['a copy', lines('diff --git a/x.txt b/y.txt', 'similarity index 100%', 'copy from x.txt', 'copy to y.txt'), 'copies are not supported (x.txt -> y.txt)'],
    ['an unterminated quoted name', lines('diff --git "a/x b/x', 'new file mode 100644'), 'unterminated quoted name'],
    ['an unknown escape', lines('diff --git "a/\\q" "b/\\q"', 'new file mode 100644'), 'unknown escape \\q'],
    ['text after a quoted name', lines('diff --git a/x b/x', 'rename from "x" y', 'rename to z'), 'after the quoted name'],
    ['rename from without rename to', lines('diff --git a/x b/y', 'rename from x'), '`rename from` without `rename to` (x)'],
    ['names that cannot be told apart', lines('diff --git a/x b/y', 'old mode 100644', 'new mode 100755'), 'cannot tell the file names apart'],
    ['a section that changes nothing', lines('diff --git a/x b/x', 'index 1111111..2222222 100644'), 'changes nothing (x)'],
    ['hunks without `---`/`+++` lines', lines('diff --git a/x b/x', '@@ -1 +1 @@', '-a', '+b'), 'line 2: a hunk outside any file section'],
    ['`---` names another file than the `diff --git` line', lines('diff --git a/x b/x', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-a', '+b'), 'names y, but the `diff --git` line names x'],
    ['`---` not /dev/null in a creation', lines('diff --git a/x b/x', 'new file mode 100644', '--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b'), 'creates x, but its `---` line is not /dev/null'],
    ['a plain section right after a header-only git section (its `---` line belongs to the git section)', renameOnly('a.txt', 'b.txt') + modify, 'the `---` line names ok.txt, but the `rename from` line names a.txt'],
    ['a hunk after text that ended the previous one', modify + lines('not a diff line', '@@ -5 +5 @@', '-c', '+d'), 'line 7: a hunk outside any file section'],
    ['a hunk cut short by a line that is not part of it', lines('--- a/x', '+++ b/x', '@@ -1,3 +1,3 @@', ' a', 'b without a prefix', '-c', '+d'), 'line 5: hunk 1 of x ends before its header\'s line counts'],
    ['`---` without `+++`', lines('--- a/x', '@@ -1 +1 @@'), '`---` header without a `+++` line'],
    ['no section at all', 'this is not a diff\n', 'no file headers found'],
    ['one bad section after good ones', modify + renameOnly('a b.txt', 'c d.txt') + lines('diff --git a/l b/l', 'new file mode 120000'), 'symbolic links are not supported (l)'],
  ];
  test.each(cases)('%s', (_name, patch, fragment) => {
    expect(() => parsePatch(patch)).toThrow(PatchError);
    expect(() => parsePatch(patch)).toThrow(fragment);
  });
});

describe('edit: git patches end to end', () => {
  let dir = '';
  let ctx: ToolContext;
  beforeEach(() => {
    dir = tempDir('agent-patch');
    ctx = { cwd: dir };
  });
  afterEach(() => removeDir(dir));
  const at = (rel: string) => path.join(dir, rel);
  const text = (rel: string) => fs.readFileSync(at(rel), 'utf8');

  test('a rename-only section renames `my file.txt`, keeping its content', async () => {
    writeTree(dir, { 'my file.txt': 'kept\ncontent\n' });
    expect(expectOk(await editTool.execute({ mode: 'patch', patch: renameOnly('my file.txt', 'your file.txt') }, ctx))).toContain('renamed my file.txt -> your file.txt');
    expect(fs.existsSync(at('my file.txt'))).toBe(false);
    expect(text('your file.txt')).toBe('kept\ncontent\n');
  });

  test('renaming a symlink moves the link itself; its target is untouched', async () => {
    writeTree(dir, { 'target.txt': 'target\n' });
    fs.symlinkSync('target.txt', at('link'));
    expectOk(await editTool.execute({ mode: 'patch', patch: renameOnly('link', 'sub/moved-link') }, ctx));
    expect(fs.lstatSync(at('sub/moved-link')).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(at('sub/moved-link'))).toBe('target.txt');
    expect(fs.existsSync(at('link'))).toBe(false);
    expect(text('target.txt')).toBe('target\n');
  });

  test('a patch undone midway removes the directories it created', async () => {
    writeTree(dir, { 'a.txt': 'a\n', 'locked.txt': 'locked\n' });
    fs.chmodSync(at('locked.txt'), 0o444);
    const patch =
      renameOnly('a.txt', 'new/deeper/a.txt') +
      lines('diff --git a/made/here/x.txt b/made/here/x.txt', 'new file mode 100644', '--- /dev/null', '+++ b/made/here/x.txt', '@@ -0,0 +1 @@', '+x') +
      lines('diff --git a/locked.txt b/locked.txt', '--- a/locked.txt', '+++ b/locked.txt', '@@ -1 +1 @@', '-locked', '+unlocked');
    expectError(await editTool.execute({ mode: 'patch', patch }, ctx), 'READ_ONLY');
    expect(fs.readdirSync(dir).sort()).toEqual(['a.txt', 'locked.txt']);
    expect(text('a.txt')).toBe('a\n');
  });

  test('a rename mixed with a modification of another file applies both', async () => {
    writeTree(dir, { 'my file.txt': 'kept\n', 'src/other.ts': 'one\ntwo\n' });
    const patch =
      renameOnly('my file.txt', 'docs/my file.txt') +
      lines('diff --git a/src/other.ts b/src/other.ts', 'index 1111111..2222222 100644', '--- a/src/other.ts', '+++ b/src/other.ts', '@@ -1,2 +1,2 @@', ' one', '-two', '+TWO');
    expect(expectOk(await editTool.execute({ mode: 'patch', patch }, ctx))).toBe(
      'Applied the patch to 2 files:\n  renamed my file.txt -> docs/my file.txt\n  modified src/other.ts',
    );
    expect(text('docs/my file.txt')).toBe('kept\n');
    expect(fs.existsSync(at('my file.txt'))).toBe(false);
    expect(text('src/other.ts')).toBe('one\nTWO\n');
  });

  test('a C-quoted non-ASCII name', async () => {
    writeTree(dir, { 't\u00e9st "q".txt': 'a\n' });
    const patch = lines('diff --git "a/t\\303\\251st \\"q\\".txt" "b/t\\303\\251st \\"q\\".txt"', 'index 1111111..2222222 100644', '--- "a/t\\303\\251st \\"q\\".txt"', '+++ "b/t\\303\\251st \\"q\\".txt"', '@@ -1 +1 @@', '-a', '+b');
    expectOk(await editTool.execute({ mode: 'patch', patch }, ctx));
    expect(text('t\u00e9st "q".txt')).toBe('b\n');
  });

  test('a binary patch is refused and no file changes', async () => {
    writeTree(dir, { 'a.txt': 'a\n' });
    const patch =
      lines('--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-a', '+b') +
      lines('diff --git a/img.png b/img.png', 'new file mode 100644', 'index 0000000..2222222', 'GIT binary patch', 'literal 5', 'McmZ?wbaG(;0ssL3', '', 'literal 0', 'HcmV?d00001', '');
    expect(expectError(await editTool.execute({ mode: 'patch', patch }, ctx), 'PATCH_FAILED')).toContain('binary diffs are not supported (img.png)');
    expect(text('a.txt')).toBe('a\n');
    expect(fs.readdirSync(dir)).toEqual(['a.txt']);
  });

  test('a new file gets the executable bit of `new file mode 100755`', async () => {
    const patch = lines('diff --git a/run.sh b/run.sh', 'new file mode 100755', '--- /dev/null', '+++ b/run.sh', '@@ -0,0 +1 @@', '+echo hi');
    expectOk(await editTool.execute({ mode: 'patch', patch }, ctx));
    expect(text('run.sh')).toBe('echo hi\n');
    expect(fs.statSync(at('run.sh')).mode & 0o100).toBe(0o100);
  });

  test('old mode/new mode set or clear the executable bit of an existing file, with or without hunks', async () => {
    writeTree(dir, { 'run.sh': 'echo\n' });
    fs.chmodSync(at('run.sh'), 0o640);
    const toExecutable = lines('diff --git a/run.sh b/run.sh', 'old mode 100644', 'new mode 100755');
    expect(expectOk(await editTool.execute({ mode: 'patch', patch: toExecutable }, ctx))).toContain('modified run.sh');
    expect(fs.statSync(at('run.sh')).mode & 0o777).toBe(0o750);
    expect(text('run.sh')).toBe('echo\n');
    const withHunk = lines('diff --git a/run.sh b/run.sh', 'old mode 100755', 'new mode 100644', '--- a/run.sh', '+++ b/run.sh', '@@ -1 +1 @@', '-echo', '+echo hi');
    expectOk(await editTool.execute({ mode: 'patch', patch: withHunk }, ctx));
    expect(text('run.sh')).toBe('echo hi\n');
    expect(fs.statSync(at('run.sh')).mode & 0o777).toBe(0o640);
  });
});

describe('placing hunks', () => {
  test('each position costs one comparison: a block found nowhere among identical lines is answered without comparing it line by line', () => {
    const file = ['y', ...Array<string>(200_000).fill('x')];
    const index = new LineIndex(file);
    expect(index.find([...Array<string>(5_000).fill('x'), 'y'], 0, 0)).toBe('missing');
    expect(index.find(['y', 'x', 'x'], 150_000, 0)).toBe(0);
    expect(index.find(['x', 'x'], 150_000, 0)).toBe(150_000);
    expect(index.find(['absent'], 0, 0)).toBe('missing');
  });

  test('a patch whose @@ line numbers are far off for every hunk runs out of its search budget and is refused, naming the hunk', () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => (i % 250 === 0 ? `mark ${i}` : 'filler'));
    const content = lines.join('\n') + '\n';
    const far = (line: number) => ({ oldStart: 10_000, newStart: 10_000, lines: [{ kind: ' ' as const, text: `mark ${line}`, noEol: false }] });
    const patch: FilePatch = { oldPath: 'f', newPath: 'f', rename: false, hunks: Array.from({ length: 40 }, (_, i) => far(i * 250)) };
    expect(searchBudget(lines.length)).toBeLessThan(40 * 10_000 * 0.6);
    expect(() => applyFilePatch(content, patch, 'f')).toThrow(/hunk \d+ \(@@ -10000 @@\) was searched for too long/);
    const right = { ...patch, hunks: patch.hunks.map((hunk, i) => ({ ...hunk, oldStart: i * 250 + 1 })) };
    expect(applyFilePatch(content, right, 'f')).toBe(content);
  });
});
