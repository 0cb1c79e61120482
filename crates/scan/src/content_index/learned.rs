//! What recent searches learned of indexed files, per query: the files a
//! query found nothing in (its misses) and what it found in the others
//! (its answers), so the same query repeated over files that have not
//! changed reads none of them.
//!
//! A query is the pattern with every switch that changes a file's report
//! (see `grep`). Files are known by their index id, which a changed file
//! never keeps (its entry goes, and a new one is made when it is read
//! again), so what is learned of an id holds as long as the id is live.
//! The index treats a file a query knows as it treats a file the trigrams
//! rule out: used as is while the watch vouches for it, after an `fstatat`
//! shows its identity unchanged otherwise.
//!
//! What an answer holds is the searcher's, not the index's: it is kept
//! here as an opaque value with its size, for the budget.

use std::{any::Any, collections::HashMap, sync::Arc};

use super::postings::{Bits, QuickHash};

/// A file's report for a query, as the search that made it keeps it.
pub(crate) type Answer = Arc<dyn Any + Send + Sync>;

/// A query's answers by file id, with each one's bytes. Shared with the
/// plans of the searches under way (see [`Known::answers`]), so a plan
/// holds one reference rather than one per answered file, and written
/// copy-on-write.
pub(crate) type Answers = Arc<HashMap<u32, (Answer, usize), QuickHash>>;

/// An answer offered for keeping: its bytes, and how to make it. It is
/// made only once it is known to fit: a dense search's reports (hundreds of
/// thousands of lines) mostly do not, and copying each one to learn that
/// took a twelfth of such a search.
pub(crate) type OfferedAnswer<'a> = (&'a dyn Fn() -> Answer, usize);

/// Queries kept (the least recently used leaves first): as many as
/// compiled patterns are kept.
pub(crate) const QUERIES_KEPT: usize = 32;

/// The most bytes of answers kept for all queries of one root together:
/// an agent's repeated searches usually return a few hundred results, a
/// few hundred KiB; past this the least recently used queries' answers go
/// (their misses stay, a bit per file).
pub(crate) const ANSWER_BYTES: usize = 4 << 20;

/// Bytes an answer costs besides its own: its map entry and share of the
/// map's room.
const ANSWER_ENTRY_BYTES: usize = size_of::<(u32, (Answer, usize))>() + 8;

/// What is learned for each recent query, least recently used first.
#[derive(Default)]
pub(crate) struct Learned {
    kept: Vec<Query>,
}

struct Query {
    text: Box<str>,
    missed: Bits,
    answers: Answers,
    answer_bytes: usize,
}

/// What is known for one query, for a search's plan.
pub(crate) struct Known<'a> {
    pub missed: &'a Bits,
    pub answers: &'a Answers,
}

impl Learned {
    /// What is known for `query`.
    pub(crate) fn of(&self, query: &str) -> Option<Known<'_>> {
        let found = self.kept.iter().find(|kept| *kept.text == *query)?;
        Some(Known {
            missed: &found.missed,
            answers: &found.answers,
        })
    }

    /// Make `query` the most recently used, if kept.
    pub(crate) fn touch(&mut self, query: &str) {
        if let Some(at) = self.kept.iter().position(|kept| *kept.text == *query) {
            let entry = self.kept.remove(at);
            self.kept.push(entry);
        }
    }

    /// `query` found nothing in file `id`.
    pub(crate) fn miss(&mut self, query: &str, id: u32) {
        self.entry(query).missed.insert(id);
    }

    /// `query` found an answer (of `bytes` bytes, made by `make`) in file
    /// `id`. Past [`ANSWER_BYTES`] the least recently used other queries'
    /// answers go first; an answer that does not fit even then is neither
    /// made nor kept.
    pub(crate) fn answer(&mut self, query: &str, id: u32, (make, bytes): OfferedAnswer<'_>) {
        let cost = bytes + ANSWER_ENTRY_BYTES;
        let mut total: usize = self.kept.iter().map(|kept| kept.answer_bytes).sum();
        self.touch(query);
        for older in 0..self.kept.len().saturating_sub(1) {
            if total + cost <= ANSWER_BYTES {
                break;
            }
            let dropped = &mut self.kept[older];
            total -= std::mem::take(&mut dropped.answer_bytes);
            dropped.answers = Answers::default();
        }
        if total + cost > ANSWER_BYTES {
            return;
        }
        let entry = self.entry(query);
        if let Some((_, old)) = Arc::make_mut(&mut entry.answers).insert(id, (make(), cost)) {
            entry.answer_bytes -= old;
        }
        entry.answer_bytes += cost;
    }

    /// File `id` left the index: its answers go with it.
    pub(crate) fn forget(&mut self, id: u32) {
        for kept in &mut self.kept {
            if !kept.answers.contains_key(&id) {
                continue;
            }
            if let Some((_, cost)) = Arc::make_mut(&mut kept.answers).remove(&id) {
                kept.answer_bytes -= cost;
            }
        }
    }

    /// Bytes noting a miss of `id` for `query`, or an answer of `bytes`,
    /// may add, at most.
    pub(crate) fn growth(query: &str, id: u32, bytes: usize) -> usize {
        query.len() + (id as usize / 64 + 1) * 8 + size_of::<Query>() + bytes + ANSWER_ENTRY_BYTES
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.kept
            .iter()
            .map(|kept| {
                kept.text.len() + kept.missed.heap_bytes() + kept.answer_bytes + size_of::<Query>()
            })
            .sum()
    }

    /// The entry of `query`, made the most recently used (and made, past
    /// [`QUERIES_KEPT`] sending the least recently used away).
    fn entry(&mut self, query: &str) -> &mut Query {
        self.touch(query);
        if self.kept.last().is_none_or(|kept| *kept.text != *query) {
            self.kept.push(Query {
                text: query.into(),
                missed: Bits::new(0),
                answers: Answers::default(),
                answer_bytes: 0,
            });
            if self.kept.len() > QUERIES_KEPT {
                self.kept.remove(0);
            }
        }
        let last = self.kept.len() - 1;
        &mut self.kept[last]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offer `text` as an answer, then call `learn` with the offer.
    fn offering(text: &str, learn: impl FnOnce(OfferedAnswer<'_>)) {
        let make = || Arc::new(text.to_string()) as Answer;
        learn((&make, text.len()));
    }

    fn text(known: &Known<'_>, id: u32) -> Option<String> {
        let (answer, _) = known.answers.get(&id)?;
        answer.downcast_ref::<String>().cloned()
    }

    #[test]
    fn misses_and_answers_are_kept_per_query() {
        let mut learned = Learned::default();
        learned.miss("q1", 3);
        offering("four", |four| learned.answer("q1", 4, four));
        offering("other", |other| learned.answer("q2", 4, other));
        let q1 = learned.of("q1").unwrap();
        assert!(q1.missed.contains(3) && !q1.missed.contains(4));
        assert_eq!(text(&q1, 4).as_deref(), Some("four"));
        assert_eq!(
            text(&learned.of("q2").unwrap(), 4).as_deref(),
            Some("other")
        );
        assert!(learned.of("q3").is_none());
        learned.forget(4);
        assert_eq!(
            text(&learned.of("q1").unwrap(), 4),
            None,
            "the file's answers went"
        );
        assert!(learned.of("q1").unwrap().missed.contains(3));
    }

    /// Past the query count the least recently used query goes; past the
    /// byte bound the least recently used queries' answers go, their
    /// misses stay.
    #[test]
    fn the_least_recently_used_go_first() {
        let mut learned = Learned::default();
        for n in 0..=QUERIES_KEPT {
            learned.miss(&format!("q{n}"), 1);
        }
        assert!(learned.of("q0").is_none());
        assert!(learned.of("q1").is_some());
        let big = "x".repeat(ANSWER_BYTES / 2);
        offering(&big, |big| learned.answer("q1", 1, big));
        offering(&big, |big| learned.answer("q2", 1, big));
        assert_eq!(
            text(&learned.of("q1").unwrap(), 1),
            None,
            "made room for q2"
        );
        assert!(learned.of("q1").unwrap().missed.contains(1));
        assert!(text(&learned.of("q2").unwrap(), 1).is_some());
        let never_made = || -> Answer { panic!("an answer that cannot fit was made") };
        learned.answer("q3", 1, (&never_made, ANSWER_BYTES));
        assert!(text(&learned.of("q3").unwrap(), 1).is_none(), "never fits");
        assert!(learned.bytes() < ANSWER_BYTES + (QUERIES_KEPT << 10));
    }
}
