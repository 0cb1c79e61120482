/**
 * The addon, loaded once, and the one way every other module reaches it.
 *
 * The napi-generated loader tries a binary built in place, then the `@natives/natives-<platform>`
 * package npm installs as an optional dependency, and when neither loads it throws an error that
 * names no platform. Loading it here, inside a `try`, turns that into `ENOTSUP` naming the platform
 * and the package that would fit, with every attempt the loader made as `cause`. Importing the
 * loader directly would not allow it: an importer of a CommonJS module gets its failure before any
 * of its own code runs (Bun evaluates such modules ahead of the importer).
 */
import { createRequire } from 'node:module';
import type * as Loader from '../index.cjs';
import { codedError } from './errors.ts';

export type * from '../index.cjs';

/** The addon's exports, as the generated loader declares them. */
export type Native = typeof Loader;

/** The loaded addon. */
export const native: Native = load();

function load(): Native {
  try {
    return createRequire(import.meta.url)('../index.cjs') as Native;
  } catch (error) {
    const platform = hostPlatform();
    throw codedError(
      'ENOTSUP',
      `@natives/natives has no native binary that loads on ${platform}: install @natives/natives-${platform} ` +
        '(npm adds it as an optional dependency where it is published) or build the addon from source ' +
        '(README: "Packages, targets and releases"); what the loader tried is in `cause`',
      { cause: error },
    );
  }
}

/** The host as napi names its platform packages: `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64-msvc`. */
function hostPlatform(): string {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const libc = glibcRuntime() === undefined ? 'musl' : 'gnu';
    return `linux-${arch}-${arch === 'arm' ? `${libc}eabihf` : libc}`;
  }
  if (platform === 'win32') return `win32-${arch}-msvc`;
  if (platform === 'android' && arch === 'arm') return 'android-arm-eabi';
  return `${platform}-${arch}`;
}

/** The glibc version the process runs on, from the diagnostic report; `undefined` on musl. */
function glibcRuntime(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime;
}
