// Long result lines under Node 20: each comes back exact, and one too long to share a chunk is lent to
// V8 as an external string (its text stays outside the JS heap, freed when the string is collected)
// rather than copied into the heap; one longer than V8's longest string is refused with a clear error.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { grep, grepIter } from '../../packages/natives/src/index.ts';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const MIB = 1 << 20;

const root = mkdtempSync(join(tmpdir(), 'natives-node-text-'));
try {
  const lines = {
    ascii: `needle ${'x'.repeat(16 * MIB)}`,
    latin1: `needle ${'\u00e9'.repeat(200_000)}`,
    wide: `needle ${'\u0100'.repeat(100_000)}`,
    astral: `needle ${'\u{1f600}'.repeat(40_000)}`,
  };
  for (const [name, line] of Object.entries(lines)) writeFileSync(join(root, `${name}.txt`), `${line}\nafter\n`);
  const expected = Object.entries(lines).map(([name, line]) => [`${name}.txt`, line]).sort(([a], [b]) => (a < b ? -1 : 1));

  collect();
  const before = process.memoryUsage();
  let answer: Awaited<ReturnType<typeof grep>> | undefined = await grep({ pattern: 'needle', path: root });
  collect();
  const held = process.memoryUsage();
  assert.deepEqual(answer.matches.map((m) => [m.path, m.line]), expected);
  const heapGrowth = (held.heapUsed - before.heapUsed) / MIB;
  const externalGrowth = (held.external - before.external) / MIB;
  // Copied, the 16 MiB line alone would be 16 MiB of heap.
  assert.ok(heapGrowth < 4, `the long lines took ${heapGrowth.toFixed(1)} MiB of the JS heap: copied, not lent`);
  assert.ok(externalGrowth >= 16, `external memory grew ${externalGrowth.toFixed(1)} MiB, not the lent 16 MiB`);

  answer = undefined;
  // Node runs the finalizers of collected external strings from its loop, after the collection.
  let freed = 0;
  for (let round = 0; round < 10 && freed < 16; round++) {
    collect();
    await new Promise((resolve) => setImmediate(resolve));
    freed = (held.external - process.memoryUsage().external) / MIB;
  }
  assert.ok(freed >= 16, `${freed.toFixed(1)} MiB of lent text freed once its strings were collected, not 16`);
  const again = await grep({ pattern: 'needle', path: root });
  assert.deepEqual(again.matches.map((m) => m.line), expected.map(([, line]) => line));

  // A line longer than V8's longest string (2^29 - 24 characters) cannot cross: a clear EFBIG that
  // names the remedy, whether the line comes in the answer, in text handed over while the search
  // runs, in a batch for `onMatch` or in a `for await` loop (there a throw would be uncaught and end
  // the process), and `maxColumns` answers.
  const huge = join(root, 'huge');
  mkdirSync(huge);
  writeFileSync(join(huge, 'a.txt'), Buffer.alloc(515 * MIB + 1, 'x').fill('needle ', 0, 7).fill('\n', 515 * MIB));
  writeFileSync(join(huge, 'b.txt'), Array.from({ length: 50_000 }, (_, i) => `needle ${i} ${'y'.repeat(40)}\n`).join(''));
  const refused = (error: NodeJS.ErrnoException) => {
    assert.equal(error.code, 'EFBIG');
    assert.match(error.message, /540016640 characters could not be made a JS string.*maxColumns/);
    return true;
  };
  await assert.rejects(grep({ pattern: 'needle', path: huge, glob: 'a.txt' }), refused);
  await assert.rejects(grep({ pattern: 'needle', path: huge }), refused);
  let called = 0;
  await assert.rejects(grep({ pattern: 'needle', path: huge }, () => called++), refused);
  assert.equal(called, 0);
  await assert.rejects(
    (async () => {
      for await (const _ of grepIter({ pattern: 'needle', path: huge })) called++;
    })(),
    refused,
  );
  assert.equal(called, 0);
  const cut = await grep({ pattern: 'needle', path: huge, maxColumns: 100 });
  assert.equal(cut.matches.length, 50_001);
  assert.equal(cut.matches[0]?.truncated, true);

  console.log(`node text smoke: long lines exact, lent (heap +${heapGrowth.toFixed(1)} MiB, external +${externalGrowth.toFixed(1)} MiB), freed once collected; a line past V8's longest string EFBIG`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
