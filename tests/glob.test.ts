/**
 * `glob` semantics end to end: pattern rules, traversal switches, type
 * filters, special files, limits, mtime order and the `onMatch` stream.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitInit, pathsOf, removeDir, run, setMtime, tempDir, writeTree } from './support/fs.ts';
import { FileType, fuzzyFind, glob, grep, type GlobMatch, type GlobOptions } from './support/natives.ts';
import { codedRejection } from './support/errors.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function fixture(label: string, files: readonly string[] | Record<string, string> = []): string {
  const dir = tempDir(label);
  dirs.push(dir);
  writeTree(dir, files);
  return dir;
}

async function paths(options: GlobOptions): Promise<string[]> {
  return pathsOf((await glob(options)).matches);
}

describe('pattern rules', () => {
  let root = '';
  beforeAll(() => {
    root = fixture('patterns', [
      'README.md',
      'top.ts',
      'Upper.TS',
      'src/index.ts',
      'src/app.tsx',
      'src/util.js',
      'src/a/b.ts',
      'src/a/deep/c.ts',
      'docs/guide.md',
    ]);
  });
  const at = (pattern: string, extra: Partial<GlobOptions> = {}) => paths({ pattern, path: root, ...extra });

  test('a pattern without `/` matches at any depth', async () => {
    expect(await at('*.ts')).toEqual(['src/a/b.ts', 'src/a/deep/c.ts', 'src/index.ts', 'top.ts']);
    expect(await at('*.md')).toEqual(['README.md', 'docs/guide.md']);
    expect(await at('deep')).toEqual(['src/a/deep']);
  });

  test('recursive: false keeps a `/`-free pattern at the top', async () => {
    expect(await at('*.ts', { recursive: false })).toEqual(['top.ts']);
    expect(await at('*.md', { recursive: false })).toEqual(['README.md']);
    expect(await at('deep', { recursive: false })).toEqual([]);
  });

  test('an unclosed brace is closed', async () => {
    expect(await at('*.{ts,tsx')).toEqual(['src/a/b.ts', 'src/a/deep/c.ts', 'src/app.tsx', 'src/index.ts', 'top.ts']);
    expect(await at('src/{index,app}.{ts,tsx')).toEqual(['src/app.tsx', 'src/index.ts']);
  });

  test('`*` does not cross `/`; `**` does', async () => {
    expect(await at('src/*.ts')).toEqual(['src/index.ts']);
    expect(await at('src/*/*.ts')).toEqual(['src/a/b.ts']);
    expect(await at('src/**/*.ts')).toEqual(['src/a/b.ts', 'src/a/deep/c.ts', 'src/index.ts']);
  });

  test('`\\` is read as `/`, and a leading `./` is dropped', async () => {
    expect(await at('src\\a\\*.ts')).toEqual(['src/a/b.ts']);
    expect(await at('src\\**\\*.ts')).toEqual(['src/a/b.ts', 'src/a/deep/c.ts', 'src/index.ts']);
    expect(await at('./src/*.ts')).toEqual(['src/index.ts']);
  });

  test('several patterns select what any of them matches, as fast-glob and tinyglobby', async () => {
    expect(await at(['src/*.ts', 'docs/**'] as never)).toEqual(['docs/guide.md', 'src/index.ts']);
    expect(pathsOf((await glob(['src/*.ts', '*.md'], { path: root })).matches)).toEqual(['README.md', 'docs/guide.md', 'src/index.ts']);
    expect(pathsOf((await glob('*.md', { path: root })).matches)).toEqual(['README.md', 'docs/guide.md']);
  });

  test('ignore (and `!` patterns) leave out what they match and all below a directory they match', async () => {
    expect(await at('**/*.ts', { ignore: ['**/deep/**'] })).toEqual(['src/a/b.ts', 'src/index.ts', 'top.ts']);
    expect(await at('src/**', { ignore: 'a' })).toEqual(['src/app.tsx', 'src/index.ts', 'src/util.js']);
    expect(await at(['*.ts', '!top.ts', '!src/a'] as never)).toEqual(['src/index.ts']);
    const streamed: string[] = [];
    const { matches } = await glob(['src/**/*.ts', 'top.ts'], { path: root, ignore: ['b.ts'] }, (m) => streamed.push(m.path));
    expect([pathsOf(matches), streamed]).toEqual([['src/a/deep/c.ts', 'src/index.ts', 'top.ts'], ['src/a/deep/c.ts', 'src/index.ts', 'top.ts']]);
  });

  test('a bad pattern or ignore pattern is EINVAL naming the option and the pattern', async () => {
    const table: [Partial<GlobOptions>, string, string][] = [
      [{ pattern: ['*.ts', 'a['] }, 'pattern', 'a['],
      [{ pattern: '*.ts', ignore: ['*.md', 'b['] }, 'ignore', 'b['],
      [{ pattern: '*.ts', ignore: '' }, 'ignore', ''],
      [{ pattern: ['!*.ts'] }, 'pattern', '!*.ts'],
      [{ pattern: [] }, 'pattern', ''],
      [{ pattern: ['*.ts', 7] as never }, 'pattern', '["*.ts",7]'],
      [{ pattern: '*.ts', ignore: 7 as never }, 'ignore', '7'],
    ];
    for (const [options, option, value] of table) {
      const error = await codedRejection(glob({ path: root, ...options } as GlobOptions));
      expect([error.code, error.option, error.value]).toEqual(['EINVAL', option, value]);
      expect(error.message).toContain(option);
    }
  });

  test('matching is case-sensitive', async () => {
    expect(await at('*.TS')).toEqual(['Upper.TS']);
    expect(await at('*.ts')).not.toContain('Upper.TS');
    expect(await at('readme.md')).toEqual([]);
    expect(await at('README.md')).toEqual(['README.md']);
    expect(await at('SRC/*.ts')).toEqual([]);
  });

  test('results carry type and mtime', async () => {
    const { matches } = await glob({ pattern: 'src/a*', path: root });
    expect(matches.map((m) => [m.path, m.fileType])).toEqual([
      ['src/a', FileType.Dir],
      ['src/app.tsx', FileType.File],
    ]);
    const stat = fs.statSync(path.join(root, 'src/app.tsx'));
    expect(matches[1].mtime).toBe(Math.floor(stat.mtimeMs));
  });

  test('mtime: false leaves mtime out, with or without the cache, in either order', async () => {
    for (const cache of [false, true]) {
      for (const sortByMtime of [false, true]) {
        const shown = await glob({ pattern: 'src/**', path: root, cache, sortByMtime });
        const bare = await glob({ pattern: 'src/**', path: root, cache, sortByMtime, mtime: false });
        expect(shown.matches.every((m) => typeof m.mtime === 'number')).toBe(true);
        expect(bare.matches).toEqual(shown.matches.map(({ path, fileType }) => ({ path, fileType, mtime: undefined })));
      }
    }
  });

  test('a relative path resolves against the current directory', async () => {
    const cwd = process.cwd();
    process.chdir(path.join(root, 'src'));
    try {
      expect(await paths({ pattern: '*.ts', path: 'a' })).toEqual(['b.ts', 'deep/c.ts']);
      expect(await paths({ pattern: '*.tsx' })).toEqual(['app.tsx']);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('hidden, .git and ignore files', () => {
  test('glob, grep and fuzzyFind leave dot-files out by default, as fd and rg; hidden: true takes them in', async () => {
    const root = fixture('hidden-default', { '.config/needle.ts': 'needle\n', '.needle.ts': 'needle\n', 'needle.ts': 'needle\n' });
    const found = async (hidden?: boolean) => [
      pathsOf((await glob({ pattern: '*.ts', path: root, hidden })).matches),
      pathsOf((await grep({ pattern: 'needle', path: root, hidden, mode: 'filesWithMatches' })).matches),
      pathsOf((await fuzzyFind({ query: 'needle', path: root, hidden })).matches).sort(),
    ];
    expect(await found()).toEqual([['needle.ts'], ['needle.ts'], ['needle.ts']]);
    const all = ['.config/needle.ts', '.needle.ts', 'needle.ts'];
    expect(await found(true)).toEqual([all, all, all]);
  });


  test('hidden entries only with hidden: true; .git never', async () => {
    const root = fixture('hidden', ['.config/settings.ts', '.env', 'app.ts', 'sub/.secret.ts']);
    gitInit(root);
    expect(await paths({ pattern: '*.ts', path: root })).toEqual(['app.ts']);
    expect(await paths({ pattern: '*.ts', path: root, hidden: true })).toEqual([
      '.config/settings.ts',
      'app.ts',
      'sub/.secret.ts',
    ]);
    const all = await paths({ pattern: '**/*', path: root, hidden: true, gitignore: false });
    expect(all).toContain('.env');
    expect(all.filter((p) => p === '.git' || p.startsWith('.git/'))).toEqual([]);
    expect(fs.existsSync(path.join(root, '.git', 'HEAD'))).toBe(true);
    // Even a pattern naming .git finds nothing inside it.
    expect(await paths({ pattern: '.git/**', path: root, hidden: true, gitignore: false })).toEqual([]);
    expect(await paths({ pattern: 'HEAD', path: root, hidden: true, gitignore: false })).toEqual([]);
  });

  test('gitignore (nested too) and .ignore inside a git repository; gitignore: false shows all', async () => {
    const root = fixture('gitignore', {
      '.gitignore': '*.log\nbuild/\n',
      'keep.ts': '',
      'debug.log': '',
      'build/out.ts': '',
      'nested/.gitignore': 'gen.ts\n',
      'nested/gen.ts': '',
      'nested/ok.ts': '',
      'other/.ignore': 'hid.ts\n',
      'other/hid.ts': '',
      'other/vis.ts': '',
    });
    gitInit(root);
    expect(await paths({ pattern: '**/*', path: root, fileType: FileType.File })).toEqual([
      'keep.ts',
      'nested/ok.ts',
      'other/vis.ts',
    ]);
    expect(await paths({ pattern: '**/*', path: root, fileType: FileType.File, gitignore: false })).toEqual([
      'build/out.ts',
      'debug.log',
      'keep.ts',
      'nested/gen.ts',
      'nested/ok.ts',
      'other/hid.ts',
      'other/vis.ts',
    ]);
    // A root below the repository top still honours the repository's rules.
    expect(await paths({ pattern: '*', path: path.join(root, 'nested') })).toEqual(['ok.ts']);
  });

  test('outside a git repository .gitignore is not honoured but .ignore is', async () => {
    const root = fixture('nogit', {
      '.gitignore': 'git-ignored.ts\n',
      '.ignore': 'plain-ignored.ts\n',
      'git-ignored.ts': '',
      'plain-ignored.ts': '',
      'kept.ts': '',
    });
    expect(await paths({ pattern: '*.ts', path: root })).toEqual(['git-ignored.ts', 'kept.ts']);
    expect(await paths({ pattern: '*.ts', path: root, gitignore: false })).toEqual([
      'git-ignored.ts',
      'kept.ts',
      'plain-ignored.ts',
    ]);
  });
});

describe('node_modules', () => {
  let root = '';
  beforeAll(() => {
    root = fixture('node-modules', [
      'app.ts',
      'node_modules/pkg/index.ts',
      'node_modules/pkg/index.d.ts',
      'web/node_modules/dep/a.ts',
      'my_node_modules/x.ts',
    ]);
  });

  test('hidden by default', async () => {
    expect(await paths({ pattern: '*.ts', path: root })).toEqual(['app.ts', 'my_node_modules/x.ts']);
    expect(await paths({ pattern: '**/*', path: root, fileType: FileType.Dir })).toEqual(['my_node_modules', 'web']);
  });

  test('included when the pattern mentions node_modules', async () => {
    expect(await paths({ pattern: 'node_modules/**/*.ts', path: root })).toEqual([
      'node_modules/pkg/index.d.ts',
      'node_modules/pkg/index.ts',
    ]);
    expect(await paths({ pattern: 'web/node_modules/*/a.ts', path: root })).toEqual(['web/node_modules/dep/a.ts']);
  });

  test('explicit includeNodeModules wins either way', async () => {
    expect(await paths({ pattern: '*.ts', path: root, includeNodeModules: true })).toEqual([
      'app.ts',
      'my_node_modules/x.ts',
      'node_modules/pkg/index.d.ts',
      'node_modules/pkg/index.ts',
      'web/node_modules/dep/a.ts',
    ]);
    expect(await paths({ pattern: 'node_modules/**', path: root, includeNodeModules: false })).toEqual([]);
    expect(await paths({ pattern: '*.ts', path: root, includeNodeModules: false })).toEqual(['app.ts', 'my_node_modules/x.ts']);
  });
});

describe('file types and special files', () => {
  let root = '';
  beforeAll(() => {
    root = fixture('special', ['file.txt', 'dir/inner.txt']);
    fs.symlinkSync('file.txt', path.join(root, 'link-to-file'));
    fs.symlinkSync('dir', path.join(root, 'link-to-dir'));
    fs.symlinkSync('.', path.join(root, 'loop'));
    fs.symlinkSync('self', path.join(root, 'self'));
    fs.symlinkSync('missing', path.join(root, 'dangling'));
    run('mkfifo', [path.join(root, 'pipe')]);
  });

  test('FileType is a TypeScript enum: names to values and values back to names', () => {
    expect(Object.entries(FileType)).toEqual([
      ['1', 'File'],
      ['2', 'Dir'],
      ['3', 'Symlink'],
      ['4', 'Other'],
      ['File', 1],
      ['Dir', 2],
      ['Symlink', 3],
      ['Other', 4],
    ]);
  });

  test('fileType filters: File, Dir, Symlink, Other', async () => {
    const typed = async (fileType?: FileType) => paths({ pattern: '**/*', path: root, fileType });
    expect(await typed(FileType.File)).toEqual(['dir/inner.txt', 'file.txt']);
    expect(await typed(FileType.Dir)).toEqual(['dir']);
    expect(await typed(FileType.Symlink)).toEqual(['dangling', 'link-to-dir', 'link-to-file', 'loop', 'self']);
    expect(await typed(FileType.Other)).toEqual(['pipe']);
    const { matches } = await glob({ pattern: '**/*', path: root });
    expect(matches.map((m) => [m.path, m.fileType])).toEqual([
      ['dangling', FileType.Symlink],
      ['dir', FileType.Dir],
      ['dir/inner.txt', FileType.File],
      ['file.txt', FileType.File],
      ['link-to-dir', FileType.Symlink],
      ['link-to-file', FileType.Symlink],
      ['loop', FileType.Symlink],
      ['pipe', FileType.Other],
      ['self', FileType.Symlink],
    ]);
  });

  test('symlinks are never followed, so a loop cannot hang the walk', async () => {
    expect(await paths({ pattern: 'link-to-dir/**', path: root })).toEqual([]);
    expect(await paths({ pattern: 'loop/**', path: root })).toEqual([]);
    expect(await paths({ pattern: 'inner.txt', path: root })).toEqual(['dir/inner.txt']);
  }, 10_000);

  test('a FIFO is listed as Other and never opened (the glob does not block)', async () => {
    const { matches } = await glob({ pattern: 'pipe', path: root, hidden: true, gitignore: false });
    expect(matches).toHaveLength(1);
    expect(matches[0].fileType).toBe(FileType.Other);
    expect(await paths({ pattern: 'pipe', path: root, fileType: FileType.File })).toEqual([]);
  }, 10_000);

  test('a search root reached through a symlink is searched', async () => {
    expect(await paths({ pattern: '*', path: path.join(root, 'link-to-dir') })).toEqual(['inner.txt']);
  });
});

describe('non-UTF-8 names', () => {
  test('are listed with every byte (U+DC00 + byte) and do not break the walk or the matching', async () => {
    const root = fixture('bytes', ['plain.txt']);
    // Names with bytes that are not UTF-8: a file and a directory holding a file.
    run('python3', [
      '-c',
      [
        'import os, sys',
        'root = os.fsencode(sys.argv[1])',
        "open(os.path.join(root, b'bad\\xffname.txt'), 'w').close()",
        "os.mkdir(os.path.join(root, b'dir\\xfe'))",
        "open(os.path.join(root, b'dir\\xfe', b'inner.txt'), 'w').close()",
      ].join('\n'),
      root,
    ]);
    expect(fs.readdirSync(root)).toHaveLength(3);
    const all = await paths({ pattern: '**/*', path: root });
    expect(all).toEqual(['bad\udcffname.txt', 'dir\udcfe', 'dir\udcfe/inner.txt', 'plain.txt']);
    expect(await paths({ pattern: '*.txt', path: root })).toEqual(['bad\udcffname.txt', 'dir\udcfe/inner.txt', 'plain.txt']);
    expect(await paths({ pattern: 'bad*', path: root })).toEqual(['bad\udcffname.txt']);
  });
});

describe('maxResults', () => {
  let root = '';
  beforeAll(() => {
    root = fixture('limit', ['a.ts', 'b.ts', 'c.ts', 'd/e.ts', 'f.md']);
  });

  test('cuts the returned matches, counts all of them, and says so', async () => {
    const cut = await glob({ pattern: '*.ts', path: root, maxResults: 2 });
    expect(pathsOf(cut.matches)).toEqual(['a.ts', 'b.ts']);
    expect(cut.totalMatches).toBe(4);
    expect(cut.limitReached).toBe(true);

    const exact = await glob({ pattern: '*.ts', path: root, maxResults: 4 });
    expect(exact.matches).toHaveLength(4);
    expect(exact.totalMatches).toBe(4);
    expect(exact.limitReached).toBe(false);

    const none = await glob({ pattern: '*.ts', path: root, maxResults: 0 });
    expect(none.matches).toEqual([]);
    expect(none.totalMatches).toBe(4);
    expect(none.limitReached).toBe(true);

    const unlimited = await glob({ pattern: '*.ts', path: root });
    expect(unlimited.totalMatches).toBe(4);
    expect(unlimited.limitReached).toBe(false);

    const empty = await glob({ pattern: '*.rs', path: root, maxResults: 0 });
    expect(empty.totalMatches).toBe(0);
    expect(empty.limitReached).toBe(false);
  });
});

describe('sortByMtime', () => {
  test('newest first, ties in path order; maxResults keeps the newest', async () => {
    const root = fixture('mtime', ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e/f.txt', 'e.txt', 'g.txt']);
    const mtimes: Record<string, number> = {
      'a.txt': 1_000_000,
      'b.txt': 3_000_000,
      'c.txt': 2_000_000,
      'd.txt': 3_000_000,
      'e/f.txt': 3_000_000,
      'e.txt': 3_000_000,
      'g.txt': 500_000,
    };
    for (const [rel, seconds] of Object.entries(mtimes)) setMtime(path.join(root, rel), seconds);
    const sorted = await glob({ pattern: '*.txt', path: root, sortByMtime: true });
    expect(pathsOf(sorted.matches)).toEqual(['b.txt', 'd.txt', 'e/f.txt', 'e.txt', 'c.txt', 'a.txt', 'g.txt']);
    expect(sorted.matches.map((m) => m.mtime)).toEqual([3e9, 3e9, 3e9, 3e9, 2e9, 1e9, 5e8]);

    const top = await glob({ pattern: '*.txt', path: root, sortByMtime: true, maxResults: 3 });
    expect(pathsOf(top.matches)).toEqual(['b.txt', 'd.txt', 'e/f.txt']);
    expect(top.totalMatches).toBe(7);
    expect(top.limitReached).toBe(true);

    const plain = await glob({ pattern: '*.txt', path: root });
    expect(pathsOf(plain.matches)).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e/f.txt', 'e.txt', 'g.txt']);
  });

  test('with maxResults: 5 over 1000 matches, onMatch runs exactly 5 times', async () => {
    const root = fixture('mtime-1000');
    const base = 1_600_000_000;
    // Spread over directories; mtime order is unrelated to path order, and no two are equal.
    const files: Array<{ rel: string; seconds: number }> = [];
    for (let i = 0; i < 1000; i++) {
      const rel = `d${i % 10}/f${String(i).padStart(4, '0')}.txt`;
      const seconds = base + ((i * 7919) % 1000);
      writeTree(root, [rel]);
      setMtime(path.join(root, rel), seconds);
      files.push({ rel, seconds });
    }
    const expected = files
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 5)
      .map((f) => f.rel);
    const seen: string[] = [];
    const result = await glob({ pattern: '*.txt', path: root, sortByMtime: true, maxResults: 5 }, (m) => seen.push(m.path));
    expect(seen).toEqual(expected);
    expect(pathsOf(result.matches)).toEqual(expected);
    expect(result.totalMatches).toBe(1000);
    expect(result.limitReached).toBe(true);
  });
});

describe('onMatch', () => {
  let root = '';
  beforeAll(() => {
    root = fixture('stream');
    const files: string[] = [];
    for (let i = 0; i < 1500; i++) files.push(`p${i % 7}/f${String(i).padStart(4, '0')}.ts`);
    writeTree(root, files);
    // Writing 1,500 files outlasts the default 5 s on a loaded machine.
  }, 60_000);

  test('is called once per returned match, in result order, all before the promise resolves', async () => {
    const seen: GlobMatch[] = [];
    let resolved = false;
    let callsAfterResolve = 0;
    const promise = glob({ pattern: '*.ts', path: root }, (m) => {
      if (resolved) callsAfterResolve++;
      seen.push(m);
    });
    const result = await promise.then((r) => {
      resolved = true;
      return r;
    });
    const callsAtResolve = seen.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(result.matches).toHaveLength(1500);
    expect(callsAtResolve).toBe(1500);
    expect(seen).toHaveLength(1500);
    expect(callsAfterResolve).toBe(0);
    expect(seen).toEqual(result.matches);
    const unstreamed = await glob({ pattern: '*.ts', path: root });
    expect(result.matches).toEqual(unstreamed.matches);
  });

  test('is called only for returned matches under maxResults', async () => {
    const seen: string[] = [];
    const result = await glob({ pattern: '*.ts', path: root, maxResults: 300 }, (m) => seen.push(m.path));
    expect(seen).toHaveLength(300);
    expect(seen).toEqual(pathsOf(result.matches));
    expect(result.totalMatches).toBe(1500);
  });

  test('a throwing onMatch rejects the glob with that error', async () => {
    const failure = new Error('stop here');
    let calls = 0;
    const outcome = glob({ pattern: '*.ts', path: root }, () => {
      calls++;
      throw failure;
    });
    let caught: unknown;
    try {
      await outcome;
    } catch (error) {
      caught = error;
    }
    expect(caught).toBe(failure);
    expect(calls).toBe(1);

    let nth = 0;
    const late = new TypeError('late failure');
    await expect(
      glob({ pattern: '*.ts', path: root }, () => {
        if (++nth === 700) throw late;
      }),
    ).rejects.toBe(late);
  });
});
