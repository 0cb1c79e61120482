use super::*;

/// Lists built by adding files `0..files.len()`, file `n` holding the
/// trigrams `files[n]`.
fn built(files: &[&[u32]]) -> Lists {
    let mut lists = Lists::default();
    for (id, trigrams) in files.iter().enumerate() {
        let prepared = lists.prepare(trigrams, id as u32);
        lists.add(trigrams, &prepared, id as u32);
    }
    lists
}

/// The ids of trigram `t`'s list.
fn ids_of(lists: &Lists, t: u32) -> Vec<u32> {
    lists.ids(lists.by_trigram[&t]).collect()
}

fn kind(lists: &Lists, t: u32) -> &'static str {
    match lists.heads[lists.by_trigram[&t] as usize].body {
        Body::Inline { .. } => "inline",
        Body::Chunk { .. } => "chunk",
        Body::Bitmap(_) => "bitmap",
    }
}

fn ids(bits: &Bits) -> Vec<u32> {
    (0..bits.len as u32)
        .filter(|&id| bits.contains(id))
        .collect()
}

/// Each list keeps its ids whatever it is stored as, and is stored as
/// what costs least for how its ids are spread.
#[test]
fn ids_come_back_as_added_in_each_form() {
    // (ids of trigram 1 among 0..total, the form the list ends in)
    let cases: &[(&[u32], u32, &str)] = &[
        (&[0, 1, 2], 3, "inline"),
        (&[5, 300, 16_000], 16_001, "inline"),
        (
            &[0, 127, 128, 16_383, 16_384, 2_000_000],
            2_000_001,
            "chunk",
        ),
        (
            &[3, 900, 1800, 2700, 3600, 4500, 5400, 6300, 7200, 8100],
            8101,
            "chunk",
        ),
        (&[0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20], 21, "inline"),
        (
            &[
                0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32,
            ],
            33,
            "bitmap",
        ),
    ];
    for (wanted, total, form) in cases {
        let mut lists = Lists::default();
        for id in 0..*total {
            let trigrams: &[u32] = if wanted.contains(&id) { &[1, 2] } else { &[2] };
            let prepared = lists.prepare(trigrams, id);
            lists.add(trigrams, &prepared, id);
        }
        assert_eq!(ids_of(&lists, 1), *wanted, "{wanted:?}");
        assert_eq!(kind(&lists, 1), *form, "{wanted:?}");
        assert_eq!(ids_of(&lists, 2), (0..*total).collect::<Vec<_>>());
        // Every file: half a gap byte each, past a word's 8 bytes a bitmap.
        let every = if *total > 16 { "bitmap" } else { "inline" };
        assert_eq!(kind(&lists, 2), every, "{wanted:?}");
    }
}

/// Gaps of every size come back, the largest spilling an inline list.
#[test]
fn gaps_of_every_size_come_back() {
    let ids = [
        0,
        1,
        9,
        73,
        585,
        4681,
        37_449,
        299_593,
        2_396_745,
        4_000_000_000,
        u32::MAX - 1,
    ];
    let mut lists = Lists::default();
    for &id in &ids {
        let prepared = lists.prepare(&[7], id);
        lists.add(&[7], &prepared, id);
    }
    assert_eq!(ids_of(&lists, 7), ids);
    assert_eq!(kind(&lists, 7), "chunk");
}

/// What adding a file will cost is known before it is added, so the
/// index's budget is never passed: the estimate is never below the cost.
#[test]
fn growth_is_known_before_a_file_is_added() {
    let mut lists = Lists::default();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    for id in 0..20_000u32 {
        let mut trigrams: Vec<u32> = (0..40)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                // Skewed: a few trigrams in most files, many in few.
                let r = rng % 1_000_000;
                if r < 500_000 {
                    (r % 64) as u32
                } else {
                    r as u32
                }
            })
            .collect();
        trigrams.sort_unstable();
        trigrams.dedup();
        let before = lists.heap_bytes();
        let prepared = lists.prepare(&trigrams, id);
        lists.add(&trigrams, &prepared, id);
        let after = lists.heap_bytes();
        assert!(
            after <= before + prepared.growth,
            "{id}: {before} + {} < {after}",
            prepared.growth
        );
    }
    assert!(lists.abandoned <= lists.arena.len() / 2 + MIN_ARENA_GROWTH);
}

/// A query's files: every requirement met by one alternative whose
/// trigrams a file all holds.
#[test]
fn queries_intersect_alternatives_and_requirements() {
    // Files 0..64; trigram 1 in the even ones (a bitmap), 2 in 3, 4 and 6,
    // 3 in 4 and 40, 4 in every file.
    let files: Vec<Vec<u32>> = (0..64u32)
        .map(|id| {
            let mut t = vec![4];
            if id % 2 == 0 {
                t.push(1);
            }
            if [3, 4, 6].contains(&id) {
                t.push(2);
            }
            if [4, 40].contains(&id) {
                t.push(3);
            }
            t
        })
        .collect();
    let refs: Vec<&[u32]> = files.iter().map(Vec::as_slice).collect();
    let lists = built(&refs);
    assert_eq!(kind(&lists, 1), "bitmap");
    assert_eq!(kind(&lists, 2), "inline");
    // (requirements, each a set of alternatives, each a set of trigrams;
    // the files found)
    type Query<'a> = &'a [&'a [&'a [u32]]];
    let cases: &[(Query, &[u32])] = &[
        (&[&[&[1, 2]]], &[4, 6]),
        (&[&[&[2, 1]]], &[4, 6]),
        (&[&[&[1, 3]]], &[4, 40]),
        (&[&[&[2], &[3]]], &[3, 4, 6, 40]),
        (&[&[&[2], &[3]], &[&[1]]], &[4, 6, 40]),
        (&[&[&[2, 3, 4]]], &[4]),
        (&[&[&[9]]], &[]),
        (&[&[&[9], &[3]]], &[4, 40]),
        (&[&[&[1, 9]]], &[]),
    ];
    for (requirements, expected) in cases {
        let requirements: Vec<Vec<Vec<u32>>> = requirements
            .iter()
            .map(|alternatives| alternatives.iter().map(|t| t.to_vec()).collect())
            .collect();
        let found = lists.matching(&requirements, 64);
        assert_eq!(ids(&found), *expected, "{requirements:?}");
        assert_eq!(found.count(), expected.len());
    }
}

/// Renumbering drops the ids that go, keeps the order and stores each
/// list as it now costs least.
#[test]
fn renumbering_keeps_the_living_in_order() {
    let files: Vec<Vec<u32>> = (0..200u32)
        .map(|id| if id % 2 == 0 { vec![1, 2] } else { vec![1] })
        .collect();
    let refs: Vec<&[u32]> = files.iter().map(Vec::as_slice).collect();
    let lists = built(&refs);
    assert_eq!(kind(&lists, 2), "bitmap");
    // Keep the odd ids and 0, renumbered densely.
    let mut next = 0;
    let renumbering: Vec<u32> = (0..200u32)
        .map(|id| {
            if id % 2 == 1 || id == 0 {
                next += 1;
                next - 1
            } else {
                u32::MAX
            }
        })
        .collect();
    let fresh = lists.renumbered(&renumbering);
    assert_eq!(ids_of(&fresh, 1), (0..101).collect::<Vec<_>>());
    assert_eq!(ids_of(&fresh, 2), [0]);
    assert_eq!(kind(&fresh, 2), "inline");
    assert!(fresh.heap_bytes() < lists.heap_bytes());
}

#[test]
fn keep_common_merges() {
    assert_eq!(
        keep_common(&[1, 3, 5, 7, 9, 200], [3, 4, 5, 200, 300].into_iter()),
        [3, 5, 200]
    );
    assert_eq!(keep_common(&[], [1].into_iter()), Vec::<u32>::new());
}

/// Tightening gives back every byte kept for growth and keeps every id;
/// lists grow again afterwards as before.
#[test]
fn tightening_keeps_the_ids_and_gives_back_the_room() {
    let files: Vec<Vec<u32>> = (0..3000u32)
        .map(|id| {
            (0..40)
                .filter(|t| id % (t + 1) == 0 || t * 97 % 3000 == id)
                .collect()
        })
        .collect();
    let refs: Vec<&[u32]> = files.iter().map(Vec::as_slice).collect();
    let mut lists = built(&refs);
    let before: Vec<Vec<u32>> = (0..40).map(|t| ids_of(&lists, t)).collect();
    let (bytes, slack) = (lists.heap_bytes(), lists.slack());
    assert!(slack > 0);
    lists.tighten();
    assert_eq!(lists.slack(), 0);
    assert_eq!(lists.heap_bytes(), bytes - slack);
    assert_eq!(
        (0..40).map(|t| ids_of(&lists, t)).collect::<Vec<_>>(),
        before
    );
    let prepared = lists.prepare(&[1, 39], 3000);
    lists.add(&[1, 39], &prepared, 3000);
    assert_eq!(ids_of(&lists, 39).last(), Some(&3000));
    assert_eq!(ids_of(&lists, 39)[..before[39].len()], before[39]);
}
