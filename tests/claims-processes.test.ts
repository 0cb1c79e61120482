/**
 * Eight real processes, each an agent of its own channel (none knows another), claim one memory
 * folder at the same moment. The zone lock must serialise them: every claim is recorded, nobody
 * holds the folder exclusively once all have claimed, and after seven release it, the last one's
 * next re-check finds it exclusive.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as path from 'node:path';
import { Claimer, claimsOf, type ClaimVerdict } from './support/claims.ts';
import { removeDir, tempDir } from './support/fs.ts';

const COUNT = 8;
let root = '';
beforeAll(() => {
  root = tempDir('claim-processes');
});
afterAll(() => removeDir(root));

type Answer = { op: string; verdict?: ClaimVerdict; released?: boolean };

test(`${COUNT} processes claiming one folder at once: none ends exclusive; the last is exclusive once ${COUNT - 1} release`, async () => {
  const home = path.join(root, 'home');
  const memoryDir = path.join(root, 'config/projects/shared/memory');
  const claimers = Array.from(
    { length: COUNT },
    (_, i) => new Claimer({ home, memoryDir, uid: `agent-${i}`, origin: `channel-${i}`, cwd: path.join(root, `work-${i}`) }),
  );
  try {
    await Promise.all(claimers.map((c) => c.next()));

    // All eight are loaded and waiting: release them at once.
    const claimed = await Promise.all(claimers.map((c) => c.send<Answer>('claim')));
    expect(claimed.every((a) => a.op === 'claim' && a.verdict !== undefined)).toBe(true);
    // Only the first through the lock can have been alone at that moment.
    expect(claimed.filter((a) => a.verdict?.exclusive).length).toBeLessThanOrEqual(1);

    const folders = await claimsOf(undefined, { home });
    expect(folders).toHaveLength(1);
    expect(folders[0]!.claims.map((c) => c.uid).sort()).toEqual(claimers.map((_, i) => `agent-${i}`));

    const rechecked = await Promise.all(claimers.map((c) => c.send<Answer>('held')));
    for (const answer of rechecked) expect(answer.verdict).toMatchObject({ exclusive: false, reason: 'claimed' });

    const releasers = claimers.slice(0, COUNT - 1);
    const released = await Promise.all(releasers.map((c) => c.send<Answer>('release')));
    expect(released.map((a) => a.released)).toEqual(releasers.map(() => true));

    const last = await claimers[COUNT - 1]!.send<Answer>('held');
    expect(last.verdict).toEqual({ exclusive: true });
    const gone = await claimers[0]!.send<Answer>('held');
    expect(gone.verdict).toMatchObject({ exclusive: false, reason: 'unproven' });
  } finally {
    expect(await Promise.all(claimers.map((c) => c.exit()))).toEqual(claimers.map(() => 0));
  }
}, 60_000);
