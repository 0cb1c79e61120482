//! The content index alone: postings, trust, events, compaction and the
//! budget, without a filesystem.

use super::*;
use crate::{
    entries::{KEY_SEPARATOR, Unsorted},
    grep::{needs::Needs, pattern::MatcherSpec},
};

/// An identity whose change lies long before any read.
fn settled(ino: u64) -> Identity {
    Identity {
        dev: 1,
        ino,
        size: 0,
        mtime: 0,
        ctime: 0,
    }
}

/// An identity changed just now.
fn fresh(ino: u64) -> Identity {
    let now = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    Identity {
        mtime: now,
        ctime: now,
        ..settled(ino)
    }
}

/// A list of the files `paths`, in path order.
fn listed(paths: &[&str]) -> Arc<Entries> {
    let keys: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| {
            p.bytes()
                .map(|b| if b == b'/' { KEY_SEPARATOR } else { b })
                .collect()
        })
        .collect();
    let items = keys
        .iter()
        .map(|key| Unsorted {
            key,
            file_type: FileType::File,
            mtime_ms: None,
        })
        .collect();
    Arc::new(Entries::from_unsorted(items))
}

fn needs(pattern: &str) -> Arc<Needs> {
    let spec = MatcherSpec {
        pattern,
        ignore_case: false,
        smart_case: false,
        literal: false,
        multiline: false,
        word: false,
    };
    Needs::of(&spec, false).unwrap()
}

/// Offer `content` as read from `relative` (`links` links, under
/// `stamp`, begun at `start`).
fn offer(
    index: &ContentIndex,
    corpus: &Corpus,
    (relative, identity, content): (&str, Identity, &str),
    (links, stamp, start): (u64, Option<Stamp>, ReadStart),
) {
    let identity = Identity {
        size: content.len() as u64,
        ..identity
    };
    index.offer(
        corpus,
        &Offer {
            relative: relative.as_bytes(),
            identity,
            links,
            content: content.as_bytes(),
            binary: false,
            start,
            stamp,
            entry: None,
        },
    );
}

/// Offer a settled file twice, so it is indexed.
fn index_twice(index: &ContentIndex, corpus: &Corpus, relative: &str, ino: u64, content: &str) {
    for _ in 0..2 {
        let start = corpus.start();
        offer(
            index,
            corpus,
            (relative, settled(ino), content),
            (1, None, start),
        );
    }
}

/// What a plan over `paths` does with each: `read`, `verify` or
/// `skip` (ruled out and vouched for).
fn fates(
    corpus: &Corpus,
    paths: &[&str],
    pattern: &str,
    stamp: Option<Stamp>,
) -> Vec<&'static str> {
    fates_for(corpus, paths, (pattern, None), stamp)
}

/// [`fates`] for a search that remembers its misses by `query`.
fn fates_for(
    corpus: &Corpus,
    paths: &[&str],
    (pattern, query): (&str, Option<&str>),
    stamp: Option<Stamp>,
) -> Vec<&'static str> {
    let entries = listed(paths);
    let selected: Arc<[usize]> = (0..paths.len()).collect();
    let plan = corpus.plan(
        (Some(needs(pattern).requirements()), query),
        (&entries, &selected),
        stamp,
        (None, false),
    );
    let mut fates = vec!["skip"; paths.len()];
    for item in &plan.items {
        fates[item.candidate as usize] = match (item.verify.is_some(), item.answered.is_some()) {
            (true, false) => "verify",
            (false, false) => "read",
            (false, true) => "answer",
            (true, true) => "verify answer",
        };
    }
    let counted: u32 = plan.gaps.iter().map(|g| g.files).sum::<u32>() + plan.after.files;
    assert_eq!(
        counted as usize,
        fates.iter().filter(|f| **f == "skip").count()
    );
    fates
}

const ROOT: &str = "/index-test-root";

fn corpus(index: &ContentIndex) -> Arc<Corpus> {
    index.corpus(Path::new(ROOT)).unwrap()
}

/// A file is indexed on its second unchanged read; then only the files
/// whose trigrams admit a match are read, the others checked by
/// identity, each in its place.
#[test]
fn files_read_twice_are_indexed_and_ruled_out_by_their_trigrams() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    let start = corpus.start();
    offer(
        &index,
        &corpus,
        ("a.rs", settled(1), "fn alpha() {}"),
        (1, None, start),
    );
    assert_eq!(index.stats().files, 0, "read once: only noted");
    index_twice(&index, &corpus, "a.rs", 1, "fn alpha() {}");
    index_twice(&index, &corpus, "b.rs", 2, "fn omega() {}");
    assert_eq!(index.stats().files, 2);
    let paths = ["a.rs", "b.rs", "c.rs"];
    assert_eq!(
        fates(&corpus, &paths, "alpha", None),
        ["read", "verify", "read"]
    );
    assert_eq!(
        fates(&corpus, &paths, "fn [a-z]+ga\\(", None),
        ["verify", "read", "read"]
    );
    assert_eq!(
        fates(&corpus, &paths, "zzzz", None),
        ["verify", "verify", "read"]
    );
}

/// Without a second unchanged read, or with a change just before the
/// read, nothing is indexed unless a watch vouches for the read.
#[test]
fn recent_changes_are_indexed_only_when_a_watch_vouches() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    let changed = fresh(1);
    for _ in 0..2 {
        let start = corpus.start();
        offer(
            &index,
            &corpus,
            ("new.rs", changed, "fn alpha() {}"),
            (1, None, start),
        );
    }
    assert_eq!(index.stats().files, 0, "racily changed, no watch");
    for _ in 0..2 {
        let start = corpus.start();
        offer(
            &index,
            &corpus,
            ("new.rs", changed, "fn alpha() {}"),
            (1, Some(7), start),
        );
    }
    assert_eq!(index.stats().files, 1);
    assert_eq!(fates(&corpus, &["new.rs"], "zzzz", Some(7)), ["skip"]);
    // Once the watch is not the one that vouched, a racy entry is read,
    // never trusted by its identity.
    assert_eq!(fates(&corpus, &["new.rs"], "zzzz", Some(8)), ["read"]);
    assert_eq!(fates(&corpus, &["new.rs"], "zzzz", None), ["read"]);
}

/// A vouched entry is skipped with no system call; a file with
/// several links, or read under another watch, is checked instead.
#[test]
fn only_single_link_files_read_under_the_same_watch_are_vouched_for() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    for _ in 0..2 {
        let start = corpus.start();
        offer(
            &index,
            &corpus,
            ("one.rs", settled(1), "alpha"),
            (1, Some(3), start),
        );
        offer(
            &index,
            &corpus,
            ("two.rs", settled(2), "alpha"),
            (2, Some(3), start),
        );
    }
    let paths = ["one.rs", "two.rs"];
    assert_eq!(fates(&corpus, &paths, "omega", Some(3)), ["skip", "verify"]);
    assert_eq!(
        fates(&corpus, &paths, "omega", Some(4)),
        ["verify", "verify"]
    );
    assert_eq!(fates(&corpus, &paths, "omega", None), ["verify", "verify"]);
}

/// An event on a file, or on a directory above it, that came while the
/// file was being read denies that read the watch's trust; an event
/// drops the entry it names at once.
#[test]
fn events_during_a_read_deny_it_trust() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    let root = Path::new(ROOT);
    // An event on the file itself drops its note: read again.
    // One on a directory above it leaves the note, but the read is
    // indexed only to be checked by identity (it is settled).
    for (path, event, fate) in [("d/x.rs", "d/x.rs", "read"), ("d/e/y.rs", "d", "verify")] {
        let start = corpus.start();
        offer(
            &index,
            &corpus,
            (path, settled(1), "alpha"),
            (1, Some(5), start),
        );
        let start = corpus.start();
        index.changed_at(&root.join(event));
        offer(
            &index,
            &corpus,
            (path, settled(1), "alpha"),
            (1, Some(5), start),
        );
        assert_eq!(fates(&corpus, &[path], "omega", Some(5)), [fate], "{path}");
    }
    index_twice(&index, &corpus, "z.rs", 3, "alpha");
    assert_eq!(fates(&corpus, &["z.rs"], "omega", None), ["verify"]);
    index.changed_at(&root.join("z.rs"));
    assert_eq!(
        fates(&corpus, &["z.rs"], "omega", None),
        ["read"],
        "dropped"
    );
    // An event on another path does not concern the read.
    let start = corpus.start();
    offer(
        &index,
        &corpus,
        ("w.rs", settled(9), "alpha"),
        (1, Some(5), start),
    );
    let start = corpus.start();
    index.changed_at(&root.join("d/x.rs.tmp"));
    offer(
        &index,
        &corpus,
        ("w.rs", settled(9), "alpha"),
        (1, Some(5), start),
    );
    assert_eq!(fates(&corpus, &["w.rs"], "omega", Some(5)), ["skip"]);
}

/// A read that began before the oldest event kept is not trusted:
/// nobody can say whether one of the events it missed named it.
#[test]
fn a_read_older_than_the_events_kept_is_not_trusted() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    let start = corpus.start();
    offer(
        &index,
        &corpus,
        ("a.rs", settled(1), "alpha"),
        (1, Some(5), start),
    );
    let start = corpus.start();
    for n in 0..=RECENT_EVENTS {
        corpus.changed(format!("other{n}").as_bytes());
    }
    offer(
        &index,
        &corpus,
        ("a.rs", settled(1), "alpha"),
        (1, Some(5), start),
    );
    assert_eq!(fates(&corpus, &["a.rs"], "omega", Some(5)), ["verify"]);
}

/// A check by identity that succeeds under a watch makes the watch
/// vouch for the file from then on; one that fails forgets it.
#[test]
fn a_verified_file_is_vouched_for_and_a_changed_one_forgotten() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    index_twice(&index, &corpus, "a.rs", 1, "alpha");
    index_twice(&index, &corpus, "b.rs", 2, "alpha");
    let entries = listed(&["a.rs", "b.rs"]);
    let plan = corpus.plan(
        (Some(needs("omega").requirements()), None),
        (&entries, &Arc::from([0, 1])),
        Some(6),
        (None, false),
    );
    let [a, b] = [plan.items[0].verify.unwrap(), plan.items[1].verify.unwrap()];
    let (a, b) = (&a, &b);
    let a_now = Identity {
        size: 5,
        ..settled(1)
    };
    let b_now = Identity {
        size: 6,
        ..settled(2)
    };
    assert!(corpus.verified(b"a.rs", a, (&a_now, 1), (corpus.start(), Some(6))));
    assert!(!corpus.verified(b"b.rs", b, (&b_now, 1), (corpus.start(), Some(6))));
    assert_eq!(
        fates(&corpus, &["a.rs", "b.rs"], "omega", Some(6)),
        ["skip", "read"]
    );
}

/// A directory removed or renamed takes every entry below it along.
#[test]
fn forgetting_a_directory_forgets_what_lies_below() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    for (ino, path) in ["b/x.rs", "b/c/y.rs", "bb/z.rs"].into_iter().enumerate() {
        index_twice(&index, &corpus, path, ino as u64, "alpha");
    }
    index.forget_within(Path::new(ROOT), b"b");
    let paths = ["b/c/y.rs", "b/x.rs", "bb/z.rs"];
    assert_eq!(
        fates(&corpus, &paths, "omega", None),
        ["read", "read", "verify"]
    );
}

/// Rewriting the lists without dead ids changes no answer.
#[test]
fn compacting_changes_no_answer() {
    let index = ContentIndex::new(64 << 20);
    let corpus = corpus(&index);
    let count = 3 * DEAD_BEFORE_COMPACTING;
    let paths: Vec<String> = (0..count).map(|n| format!("f{n:05}.rs")).collect();
    for (n, path) in paths.iter().enumerate() {
        let word = if n % 3 == 0 { "alpha" } else { "omega" };
        index_twice(&index, &corpus, path, n as u64, word);
    }
    for path in paths
        .iter()
        .skip(1)
        .step_by(3)
        .chain(paths.iter().skip(2).step_by(3))
    {
        index.changed_at(&Path::new(ROOT).join(path));
    }
    assert!(corpus.lock().slots.len() < count, "compacted");
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let fates_alpha = fates(&corpus, &refs, "alpha", None);
    assert!(fates_alpha.iter().all(|f| *f == "read"));
    for (n, fate) in fates(&corpus, &refs, "omega", None).into_iter().enumerate() {
        let expected = if n % 3 == 0 { "verify" } else { "read" };
        assert_eq!(fate, expected, "{n}");
    }
}

/// Past the budget the least recently searched root leaves first; a
/// root alone over it stops taking files but keeps what it has.
#[test]
fn the_budget_evicts_old_roots_then_stops_admitting() {
    let text: String = (0..2000).map(|n| format!("w{n} ")).collect();
    let index = ContentIndex::new(256 << 10);
    let old = index.corpus(Path::new("/old")).unwrap();
    index_twice(&index, &old, "a.txt", 1, &text);
    let new = index.corpus(Path::new("/new")).unwrap();
    let mut n = 0;
    while !new.lock().full {
        index_twice(&index, &new, &format!("f{n}.txt"), n, &text);
        assert!(index.stats().bytes <= 256 << 10, "{:?}", index.stats());
        n += 1;
    }
    assert!(
        old.evicted.load(Ordering::Relaxed),
        "the older root left first"
    );
    assert_eq!(index.stats().roots, 1);
    let kept = index.stats().files;
    assert!(kept > 1);
    index_twice(&index, &new, "late.txt", 10_000, &text);
    assert_eq!(index.stats().files, kept, "no room: not indexed");
}

/// Files read once are noted within a share of the budget: a first
/// search over more files than the budget holds notes leaves room to
/// index, so the second indexes files (all notes, it indexed none), and a
/// file not noted then is noted once notes have left.
#[test]
fn notes_leave_room_to_index() {
    const BUDGET: usize = 64 << 10;
    let index = ContentIndex::new(BUDGET);
    let corpus = corpus(&index);
    let files: Vec<String> = (0..2 * BUDGET / noted_bytes(b"file-00000.txt"))
        .map(|n| format!("file-{n:05}.txt"))
        .collect();
    for round in 0..2 {
        for (n, path) in files.iter().enumerate() {
            let start = corpus.start();
            let text = format!("word{n} shared text {round}");
            let content = &text[..text.len() - 2];
            offer(
                &index,
                &corpus,
                (path, settled(n as u64), content),
                (1, None, start),
            );
        }
    }
    let notes = corpus.lock().notes_bytes;
    assert!(notes <= BUDGET / NOTES_SHARE, "{notes}");
    assert!(index.stats().files > 0, "{:?}", index.stats());
    assert!(index.stats().bytes <= BUDGET);
}

/// A search that read an indexed file whole and found nothing lets the
/// next search for the same query rule it out, as the trigrams would (the
/// watch vouching, or its identity checked); another query still reads
/// it. Only a read of the file indexed counts, and a change takes the
/// miss with the file's entry.
#[test]
fn misses_rule_a_file_out_for_the_same_query_only() {
    // Every trigram of `unsafe impl`, but not the phrase.
    const TEXT: &str = "unsafe x\nsafe impl\n";
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    let paths = ["a.rs", "b.rs", "c.rs"];
    for (n, path) in paths.iter().enumerate() {
        index_twice(&index, &corpus, path, n as u64, TEXT);
    }
    let query = "00000unsafe impl";
    let miss = |path: &str, identity: Identity, start: ReadStart, stamp: Option<Stamp>| {
        let identity = Identity {
            size: TEXT.len() as u64,
            ..identity
        };
        index.learn(
            &corpus,
            (query, path.as_bytes()),
            (&identity, 1),
            (start, stamp),
            None,
        );
    };
    let search =
        |query: Option<&str>, stamp| fates_for(&corpus, &paths, ("unsafe impl", query), stamp);
    assert_eq!(
        search(Some(query), None),
        ["read"; 3],
        "the trigrams admit all three"
    );
    miss("a.rs", settled(0), corpus.start(), None);
    miss("b.rs", settled(9), corpus.start(), None); // not the file indexed
    assert_eq!(search(Some(query), None), ["verify", "read", "read"]);
    assert_eq!(
        search(Some("10000unsafe impl"), None),
        ["read"; 3],
        "another query"
    );
    assert_eq!(search(None, None), ["read"; 3], "no query");

    // A file changed just now, read under a watch: a miss only when no
    // event on it came since the read began.
    index_twice(&index, &corpus, "c.rs", 2, TEXT);
    let start = corpus.start();
    miss("c.rs", settled(2), start, Some(4));
    assert_eq!(
        search(Some(query), Some(4))[2],
        "verify",
        "not vouched for by this watch"
    );
    corpus.changed(b"c.rs");
    assert_eq!(
        search(Some(query), Some(4))[2],
        "read",
        "its entry went with the change"
    );
    index_twice(&index, &corpus, "c.rs", 2, TEXT);
    assert_eq!(
        search(Some(query), None)[2],
        "read",
        "a new entry has no miss"
    );
    let start = corpus.start();
    corpus.changed(b"c.rs");
    index_twice(&index, &corpus, "c.rs", 2, TEXT);
    miss("c.rs", settled(2), start, Some(4));
    assert_eq!(
        search(Some(query), None)[2],
        "verify",
        "settled: its identity suffices"
    );
}

/// Past [`learned::QUERIES_KEPT`] queries the least recently used one's misses go;
/// rewriting the lists forgets every miss.
#[test]
fn misses_are_kept_for_recent_queries_until_the_lists_are_rewritten() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    index_twice(&index, &corpus, "a.rs", 1, "alpha beta");
    let identity = Identity {
        size: "alpha beta".len() as u64,
        ..settled(1)
    };
    let query = |n: usize| format!("00000alpha{n}");
    for n in 0..=learned::QUERIES_KEPT {
        let query = query(n);
        index.learn(
            &corpus,
            (&query, b"a.rs"),
            (&identity, 1),
            (corpus.start(), None),
            None,
        );
    }
    let fate = |n: usize| fates_for(&corpus, &["a.rs"], ("alpha", Some(&query(n))), None)[0];
    assert_eq!(fate(0), "read", "the oldest query's misses went");
    assert_eq!(fate(1), "verify");
    assert_eq!(fate(learned::QUERIES_KEPT), "verify");
    for n in 0..DEAD_BEFORE_COMPACTING + 2 {
        index_twice(&index, &corpus, &format!("gone{n}.rs"), n as u64 + 10, "x");
        corpus.changed(format!("gone{n}.rs").as_bytes());
    }
    assert_eq!(
        fate(learned::QUERIES_KEPT),
        "read",
        "compacted: misses forgotten"
    );
    assert_eq!(
        fates(&corpus, &["a.rs"], "alpha", None),
        ["read"],
        "still indexed"
    );
}

/// A file a search for the query found results in is answered from them
/// by the next search for it: at once while the watch vouches for it,
/// after its identity is checked otherwise; a change takes the answer.
#[test]
fn answers_stand_for_a_read_of_the_same_query() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    let text = "fn alpha() {}";
    index_twice(&index, &corpus, "a.rs", 1, text);
    let identity = Identity {
        size: text.len() as u64,
        ..settled(1)
    };
    let found: Answer = Arc::new("the report");
    let learn = |stamp: Option<Stamp>| {
        let at = ("query", &b"a.rs"[..]);
        let start = corpus.start();
        index.learn(
            &corpus,
            at,
            (&identity, 1),
            (start, stamp),
            Some((&|| Arc::clone(&found), 10)),
        );
    };
    let fate = |query: &str, stamp| fates_for(&corpus, &["a.rs"], ("alpha", Some(query)), stamp)[0];
    assert_eq!(fate("query", None), "read");
    learn(None);
    assert_eq!(fate("query", None), "verify answer");
    assert_eq!(fate("another", None), "read");
    // Read again under a watch, which vouches for it from then on.
    offer(
        &index,
        &corpus,
        ("a.rs", settled(1), text),
        (1, Some(7), corpus.start()),
    );
    assert_eq!(fate("query", Some(7)), "answer");
    assert_eq!(fate("query", Some(8)), "verify answer", "another watch");
    let bytes = index.stats().bytes;
    corpus.changed(b"a.rs");
    assert!(
        index.stats().bytes < bytes,
        "the answer went with the entry"
    );
    assert_eq!(fate("query", Some(7)), "read");
}

/// A search asking for the plan of the search before, with nothing of the
/// corpus changed since, shares it; any change (an event, a file indexed,
/// one vouched for anew, something learned) makes the next plan anew.
#[test]
fn a_plan_is_shared_until_the_corpus_changes() {
    let index = ContentIndex::new(1 << 20);
    let corpus = corpus(&index);
    index_twice(&index, &corpus, "a.rs", 1, "fn alpha() {}");
    index_twice(&index, &corpus, "b.rs", 2, "fn omega() {}");
    let entries = listed(&["a.rs", "b.rs", "c.rs"]);
    let selected: Arc<[usize]> = Arc::from([0, 1, 2]);
    let needs = needs("alpha");
    let plan = |query: &str, stamp: Option<Stamp>| {
        corpus.plan(
            (Some(needs.requirements()), Some(query)),
            (&entries, &selected),
            stamp,
            (None, false),
        )
    };
    let first = plan("q", None);
    assert!(Arc::ptr_eq(&first, &plan("q", None)), "shared");
    assert!(!Arc::ptr_eq(&first, &plan("q", Some(3))), "another watch");
    assert!(!Arc::ptr_eq(&first, &plan("other", None)), "another query");
    let identity = Identity {
        size: "fn omega() {}".len() as u64,
        ..settled(2)
    };
    let changes: [(&str, &dyn Fn()); 3] = [
        ("a miss learned", &|| {
            let at = ("q", &b"b.rs"[..]);
            index.learn(&corpus, at, (&identity, 1), (corpus.start(), None), None);
        }),
        ("a file vouched for", &|| {
            offer(
                &index,
                &corpus,
                ("b.rs", identity, "fn omega() {}"),
                (1, Some(9), corpus.start()),
            );
        }),
        ("an event", &|| corpus.changed(b"a.rs")),
    ];
    for (what, change) in changes {
        let before = plan("q", None);
        change();
        let after = plan("q", None);
        assert!(!Arc::ptr_eq(&before, &after), "{what}");
        assert!(
            Arc::ptr_eq(&after, &plan("q", None)),
            "{what}: shared again"
        );
    }
    let fates: Vec<bool> = plan("q", None)
        .items
        .iter()
        .map(|item| item.verify.is_some())
        .collect();
    assert_eq!(
        fates,
        [false, true, false],
        "a.rs forgotten, b.rs a miss to verify, c.rs never indexed"
    );
}
