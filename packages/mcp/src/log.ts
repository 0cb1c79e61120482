/**
 * The server's log: lines on stderr, since stdout carries the protocol
 * alone. `error` says only what went wrong, `info` (the default) also the
 * roots in force and each cancelled call (how long after the cancellation
 * its native work ended), `debug` also every call with its outcome and time.
 */

/** How much is logged. */
export type LogLevel = 'error' | 'info' | 'debug';

export const LOG_LEVELS: readonly LogLevel[] = ['error', 'info', 'debug'];

export interface Logger {
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
}

/** A logger writing `natives-mcp: message` lines to `stream` (default stderr), up to `level`. */
export function stderrLogger(level: LogLevel, stream: { write(line: string): unknown } = process.stderr): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const line = (message: string) => void stream.write(`natives-mcp: ${message}\n`);
  return {
    warn: line,
    info: (message) => rank >= 1 && line(message),
    debug: (message) => rank >= 2 && line(message),
  };
}
