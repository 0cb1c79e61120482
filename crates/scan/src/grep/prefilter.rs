//! Skipping the files a cached grep cannot match, without reading them:
//! one search's use of the content index (see `content_index`), with what its
//! pattern needs of a file's content (see `needs`).
//!
//! A cached grep saves the walk only: every candidate is still opened and
//! read, and over a tree of small files that, not the regex, is most of the
//! time. So the cache indexes the trigrams of the files cached greps read,
//! and a search reads only the files whose trigrams admit a match.
//!
//! - **Which files are indexed**: those read whole as text, at most
//!   `content_index::MAX_INDEXED` bytes, no NUL, no byte-order mark (which would
//!   make the searcher transcode it), on the search root's own device when
//!   that is a local filesystem (a network filesystem may answer `stat`
//!   from attributes it cached seconds ago, and reports no remote change).
//!   A file above the one block read whole anyway is read whole here too:
//!   text searched as one slice reports what a stream would; with a NUL or
//!   a mark it is searched as the stream it would have been.
//! - **Trust** is the index's (see `content_index`): a ruled-out file is skipped
//!   with no system call while the scan's watch vouches for it, else after
//!   an `fstatat` proving its identity unchanged.

use std::{
    fs::{File, Metadata},
    io::{self, Read},
    sync::Arc,
};

use grep_regex::RegexMatcher;
use grep_searcher::Searcher;

use super::{
    needs::Needs,
    read::{Opener, Root, SLICE_MAX},
    search::{FileReport, Opened, Shape, Stop, open_file, search_reader, search_slice, settle},
};
use crate::{
    content_index::{
        Answer, ContentIndex, Corpus, Item, MAX_INDEXED, Offer, Plan, ReadStart, Stamp,
        identity::Identity,
    },
    entries::Entries,
    error::Result,
};

/// The largest file too large to index that a cached search still reads
/// whole, when its first block is text, to search it as one slice: a
/// minified bundle or source map is often one line of megabytes, which a
/// stream's buffer reaches by doubling, copying and faulting in every size
/// on the way (a twentieth of a dense search of the bench's `npm` tree,
/// whose four source maps of 5.5 MB each are single lines).
const READ_WHOLE_MAX: u64 = 16 << 20;

/// Whether the searcher would transcode `content` rather than search its
/// bytes (a UTF-8 or UTF-16 byte-order mark).
fn has_bom(content: &[u8]) -> bool {
    content.starts_with(&[0xEF, 0xBB, 0xBF])
        || content.starts_with(&[0xFF, 0xFE])
        || content.starts_with(&[0xFE, 0xFF])
}

/// One cached search's use of the index: its plan, and the files it reads
/// offered for indexing.
pub(super) struct Prefilter<'a> {
    index: &'a ContentIndex,
    corpus: Arc<Corpus>,
    /// The root's device: only files on it are indexed.
    device: u64,
    /// The watch that vouches for this search's files, if any.
    stamp: Option<Stamp>,
    plan: Arc<Plan>,
    entries: &'a Arc<Entries>,
    selected: &'a [usize],
    /// The query the index remembers what this search finds by.
    query: Option<&'a str>,
    /// The most results a file can give this search (see `Shape`).
    per_file_cap: Option<u64>,
}

/// A cached list and the watch that vouches for it, as a search sees them.
pub(super) struct Listed<'a> {
    pub entries: &'a Arc<Entries>,
    pub selected: &'a Arc<[usize]>,
    pub stamp: Option<Stamp>,
}

impl<'a> Prefilter<'a> {
    /// The prefilter of a search of `listed` under `root`, its plan made,
    /// or `None` when the index is off or `root` is not on a local
    /// filesystem.
    pub(super) fn new(
        index: &'a ContentIndex,
        root: &Root,
        (needs, query): (Option<&Needs>, Option<&'a str>),
        listed: Listed<'a>,
        shape: &Shape,
    ) -> Option<Prefilter<'a>> {
        let device = root.local_device()?;
        let corpus = index.corpus(root.path())?;
        let plan = corpus.plan(
            (needs.map(Needs::requirements), query),
            (listed.entries, listed.selected),
            listed.stamp,
            (shape.max_file_size, shape.multiline),
        );
        index.count_skipped(plan.trusted, 0);
        Some(Prefilter {
            index,
            corpus,
            device,
            stamp: listed.stamp,
            plan,
            entries: listed.entries,
            selected: listed.selected,
            query,
            per_file_cap: shape.per_file_cap,
        })
    }

    /// The plan: which candidates are looked at, in order, and the files
    /// ruled out around them.
    pub(super) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Where the read of a file begins (see `content_index::ReadStart`).
    pub(super) fn start(&self) -> ReadStart {
        self.corpus.start()
    }

    fn item(&self, index: usize) -> &Item {
        &self.plan.items[index]
    }

    /// Search the plan's item `index` (at `relative`) as
    /// `search::search_file` does, unless an `fstatat` shows it is still
    /// the file the index ruled out; offer what is read for indexing.
    pub(super) fn search_file(
        &self,
        (searcher, matcher, shape): (&mut Searcher, &RegexMatcher, &Shape<'_>),
        opener: &mut Opener<'_>,
        (index, relative): (usize, &[u8]),
        stop: &Stop<'_>,
        before_stream: &mut dyn FnMut(),
    ) -> Result<FileReport> {
        stop.token.check()?;
        if let Some(report) = self.known(opener, index, relative) {
            return Ok(report);
        }
        let start = self.start();
        let searched = match open_file(opener, shape, relative, false, stop)? {
            Opened::Content(content, metadata) => {
                self.consider(index, relative, &metadata, start, (content, true));
                let searched = search_slice(searcher, matcher, shape, content, relative);
                self.learn(&searched, relative, &metadata, start);
                searched
            }
            Opened::Stream(file) => {
                before_stream();
                let at = (index, relative, start);
                self.search_large(file, at, (searcher, matcher, shape), stop)
            }
            Opened::Done(report) => return Ok(report),
        };
        settle(searched, opener, relative, false, stop)
    }

    /// Search a file above the block read whole (or reporting size 0):
    /// read whole too when it may be indexed, then searched as a slice if
    /// it is text, else as the stream it is; offered for indexing either
    /// way. Of a file too large to index only the first block is read
    /// ahead: a NUL there says all that its search can ever find; without
    /// one, a file of at most [`READ_WHOLE_MAX`] is read whole as well.
    pub(super) fn search_large(
        &self,
        mut file: File,
        (index, relative, start): (usize, &[u8], ReadStart),
        (searcher, matcher, shape): (&mut Searcher, &RegexMatcher, &Shape<'_>),
        stop: &Stop<'_>,
    ) -> io::Result<FileReport> {
        let metadata = file.metadata()?;
        let size = metadata.len();
        let (limit, whole) = match size {
            // Size 0 says nothing of a pseudo-file: at most a block more.
            0 => (SLICE_MAX as u64 + 1, true),
            size if size > MAX_INDEXED as u64 => (SLICE_MAX as u64, false),
            size => (size, true),
        };
        let mut content = Vec::with_capacity(limit as usize);
        (&mut file).take(limit).read_to_end(&mut content)?;
        self.consider(index, relative, &metadata, start, (&content, whole));
        let mut text = memchr::memchr(0, &content).is_none() && !has_bom(&content);
        if text && !whole && size <= READ_WHOLE_MAX {
            let read = content.len();
            content.reserve_exact(size as usize - read);
            (&mut file)
                .take(size - read as u64)
                .read_to_end(&mut content)?;
            text = memchr::memchr(0, &content[read..]).is_none();
        }
        if text && content.len() as u64 == size {
            let searched = search_slice(searcher, matcher, shape, &content, relative);
            if whole {
                self.learn(&searched, relative, &metadata, start);
            }
            return searched;
        }
        let stream = io::Cursor::new(content).chain(file);
        search_reader(shape, false, matcher, stream, stop, relative)
    }

    /// The report of item `index` when the index knows it without a read:
    /// ruled out (searched, nothing found, binary where its search stops at
    /// a NUL, as reading it would report) or answered by an earlier search
    /// for the same query, the watch vouching for it or an `fstatat`
    /// showing it unchanged.
    pub(super) fn known(
        &self,
        opener: &mut Opener<'_>,
        index: usize,
        relative: &[u8],
    ) -> Option<FileReport> {
        let item = self.item(index);
        if item.verify.is_none() && item.answered.is_none() {
            return None;
        }
        let answered = match item.answered {
            Some(id) => Some(self.answered(id)?),
            None => None,
        };
        let indexed = item.verify;
        if let Some(indexed) = &indexed {
            let start = self.start();
            let (found, links) = opener.identity(relative).ok()?;
            let trust = (start, self.stamp);
            if !self
                .corpus
                .verified(relative, indexed, (&found, links), trust)
            {
                return None;
            }
        }
        if answered.is_some() {
            self.index.count_answered();
            return answered;
        }
        self.index.count_skipped(0, 1);
        Some(FileReport {
            searched: true,
            binary: indexed?.binary,
            ..FileReport::default()
        })
    }

    /// File `id`'s kept answer as this search would report it: the same
    /// report, when the search would not have cut it short at its limit.
    fn answered(&self, id: u32) -> Option<FileReport> {
        let (answer, _) = self.plan.answers.as_ref()?.get(&id)?;
        let report = answer.downcast_ref::<FileReport>()?;
        let whole = self.per_file_cap.is_none_or(|cap| report.results() < cap);
        whole.then(|| report.clone())
    }

    /// Tell the index what the search of the whole of `relative`, read from
    /// `start` on as `metadata` describes it, found (see `content_index`'s
    /// misses and answers): nothing, or a report no limit cut short.
    fn learn(
        &self,
        searched: &io::Result<FileReport>,
        relative: &[u8],
        metadata: &Metadata,
        start: ReadStart,
    ) {
        let (Some(query), Ok(report)) = (self.query, searched) else {
            return;
        };
        let make = || Arc::new(report.clone()) as Answer;
        let found = match report.count {
            0 => None,
            _ if !self.keeps(report) => return,
            _ => Some((
                &make as &dyn Fn() -> Answer,
                report.held_bytes() + size_of::<FileReport>(),
            )),
        };
        let at = (query, relative);
        let identity = (&Identity::of(metadata), links_of(metadata));
        self.index
            .learn(&self.corpus, at, identity, (start, self.stamp), found);
    }

    /// Whether `report` may answer a later search: a whole file searched,
    /// nothing unreadable or observed, no result cut off by this search's
    /// limit.
    fn keeps(&self, report: &FileReport) -> bool {
        let whole = self.per_file_cap.is_none_or(|cap| report.results() < cap);
        whole
            && report.searched
            && !report.too_large
            && report.unreadable.is_none()
            && report.observed.is_empty()
    }

    /// Offer item `index` (at `relative`) for indexing: `content` is what a
    /// read that began at `start` found, all of it (`whole`) or its first
    /// block; its `fstat` said `metadata`. What its search searches is
    /// indexed: the whole of a text file; of a file with a NUL, nothing
    /// when it is searched as one block, else what comes before the NUL
    /// (the searcher stops there).
    pub(super) fn consider(
        &self,
        index: usize,
        relative: &[u8],
        metadata: &Metadata,
        start: ReadStart,
        (content, whole): (&[u8], bool),
    ) {
        let identity = Identity::of(metadata);
        let complete = !whole || identity.size == content.len() as u64;
        if identity.dev != self.device || !complete || has_bom(content) {
            return;
        }
        let searched = match memchr::memchr(0, content) {
            None if whole => content,
            None => return,
            Some(_) if identity.size <= SLICE_MAX as u64 => &[][..],
            Some(at) => &content[..at],
        };
        let entry = self.selected[self.item(index).candidate as usize];
        let offer = Offer {
            relative,
            identity,
            links: links_of(metadata),
            content: searched,
            binary: searched.len() < content.len(),
            start,
            stamp: self.stamp,
            entry: Some((self.entries, entry)),
        };
        self.index.offer(&self.corpus, &offer);
    }
}

impl Drop for Prefilter<'_> {
    /// The search is over: what it indexed is in, so the index gives back
    /// the room it kept for growth (see `Corpus::tighten`).
    fn drop(&mut self) {
        self.corpus.tighten();
    }
}

/// The hard links of the file `metadata` describes (1 off Unix, where no
/// file is indexed anyway).
fn links_of(metadata: &Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::nlink(metadata)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        1
    }
}
