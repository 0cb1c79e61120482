/**
 * The command line: `natives-mcp [--root DIR]... [--allow-run] [--no-watch]
 * [--no-persist] [--no-share] [--log-level LEVEL]`. It serves MCP over stdin/stdout until
 * stdin closes.
 *
 * Before serving, anything written with `console.log` is sent to stderr
 * (stdout is the protocol's alone), and the scan cache starts watching the
 * filesystem so that cached searches see every change, whoever made it
 * (`--no-watch` leaves the cache to its TTL and to the server's own writes).
 * Scans are kept across restarts (`FS_SCAN_CACHE_PERSIST=1`): a client starts
 * a server per session, and the next one restores what this one walked
 * instead of walking again; `--no-persist`, or `FS_SCAN_CACHE_PERSIST=0` in
 * the environment, keeps them in memory alone. Watching and persisting, the
 * servers of one user share one index per root (`FS_SCAN_CACHE_SHARED=1`):
 * the first walks and watches it, the others read its list; `--no-share`,
 * or `FS_SCAN_CACHE_SHARED=0`, gives each server its own.
 */
import { parseArgs } from 'node:util';
import { watchFsScanCache } from '@natives/natives';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { LOG_LEVELS, type LogLevel, stderrLogger } from './log.ts';
import { RootError, Roots } from './roots.ts';
import { VERSION, createServer } from './server.ts';

export const USAGE = `Usage: natives-mcp [--root DIR]... [--allow-run] [--no-watch] [--no-persist] [--no-share] [--log-level error|info|debug]

An MCP server on stdio: find, glob, grep, read, write and edit, confined to the roots.

  --root DIR         a directory the tools may read and write (repeatable); the client's MCP
                     roots are added; with neither, the current directory is the root
  --allow-run        also offer \`run\` (a shell command in the first root); off by default
  --no-watch         do not watch the filesystem for the scan cache (cached searches then
                     see other processes' changes only after the cache's TTL)
  --no-persist       do not keep scans across restarts (by default the next server restores
                     them from private records under $NATIVES_HOME, else ~/.natives, instead
                     of walking the roots again)
  --no-share         do not share scans with this user's other servers (by default, watching
                     and persisting, one server walks and watches each root and the others
                     read its list); implied by --no-watch and --no-persist
  --log-level LEVEL  what goes to stderr: error, info (default) or debug
  --help, --version
`;

/** What the command line asks for. */
export interface CommandLine {
  roots: string[];
  allowRun: boolean;
  watch: boolean;
  persist: boolean;
  share: boolean;
  logLevel: LogLevel;
  help: boolean;
  version: boolean;
}

/** Parse the arguments (without the runtime and script); throws `TypeError` naming a bad one. */
export function parseCommandLine(args: readonly string[]): CommandLine {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      root: { type: 'string', multiple: true, default: [] },
      'allow-run': { type: 'boolean', default: false },
      'no-watch': { type: 'boolean', default: false },
      'no-persist': { type: 'boolean', default: false },
      'no-share': { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean', default: false },
      version: { type: 'boolean', default: false },
    },
  });
  // `natives-mcp mcp` reads as the subcommand some launchers add.
  const extra = positionals.filter((word) => word !== 'mcp');
  if (extra.length > 0) throw new TypeError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const logLevel = values['log-level'] as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new TypeError(`--log-level must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(logLevel)})`);
  return {
    roots: values.root,
    allowRun: values['allow-run'],
    watch: !values['no-watch'],
    persist: !values['no-persist'],
    share: !values['no-share'] && !values['no-watch'] && !values['no-persist'],
    logLevel,
    help: values.help,
    version: values.version,
  };
}

/** Run the server as the command line asks; resolves with the exit status when stdin closes. */
export async function main(args: readonly string[]): Promise<number> {
  let options: CommandLine;
  let roots: Roots;
  try {
    options = parseCommandLine(args);
    if (options.help || options.version) {
      process.stdout.write(options.help ? USAGE : `${VERSION}\n`);
      return 0;
    }
    roots = Roots.fromArgs(options.roots);
  } catch (error) {
    if (!(error instanceof TypeError || error instanceof RootError)) throw error;
    process.stderr.write(`natives-mcp: ${error.message}\n${USAGE}`);
    return 2;
  }
  console.log = console.info = console.debug = console.error;
  const log = stderrLogger(options.logLevel);
  // Before the first call that reaches the scan cache, which reads its policy then.
  if (options.persist) process.env.FS_SCAN_CACHE_PERSIST ??= '1';
  else process.env.FS_SCAN_CACHE_PERSIST = '0';
  if (options.share) process.env.FS_SCAN_CACHE_SHARED ??= '1';
  else process.env.FS_SCAN_CACHE_SHARED = '0';
  if (options.watch) startWatching(log);
  const server = createServer({ roots, allowRun: options.allowRun, log });
  const closed = new Promise<void>((resolve) => process.stdin.once('end', resolve).once('close', resolve));
  await server.connect(new StdioServerTransport());
  log.info(`natives-mcp ${VERSION} serving on stdio; roots: ${roots.list().map((root) => root.real).join(', ')}${options.allowRun ? '; run allowed' : ''}`);
  await closed;
  await server.close();
  return 0;
}

function startWatching(log: ReturnType<typeof stderrLogger>): void {
  try {
    watchFsScanCache();
  } catch (error) {
    log.warn(`watching is unavailable (${error instanceof Error ? error.message : String(error)}); cached searches follow the TTL`);
  }
}
