// With the platform package gone, importing the package fails at once with ENOTSUP naming the
// package that would fit (argv[2]), and the generated loader's errors as `cause`.
import { strict as assert } from 'node:assert';

const platformPackage = process.argv[2];
const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}`;
let failure;
try {
  await import('@natives/natives');
} catch (error) {
  failure = error;
}
assert.ok(failure instanceof Error, 'the import succeeded without a native binary');
assert.equal(failure.code, 'ENOTSUP', failure.stack);
assert.match(failure.message, new RegExp(`install ${platformPackage} `));
assert.ok(failure.cause instanceof Error, 'the loader errors are the cause');
console.log(`${runtime}: without ${platformPackage}, the import is ENOTSUP naming it: ok`);
