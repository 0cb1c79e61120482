//! Copying a member's build output into a new member: one clone per file,
//! in parallel.
//!
//! Where the filesystem shares extents (btrfs, XFS, bcachefs...), each file
//! is cloned with `FICLONE`: instant, and no block is written until one side
//! changes it. Elsewhere each file is copied with `copy_file_range` (what the
//! standard library's copy does), inside the kernel. Every file keeps its
//! permission bits and its modification time, because cargo decides what is
//! fresh by comparing modification times.
//!
//! Never hard links between members: cargo rewrites files of a target
//! directory in place (a build script's `output`, fingerprints, dep-info:
//! the same inode, truncated and rewritten, as `tests/pool_hard_links.rs`
//! shows), so two members sharing an inode would share those rewrites and
//! one of them would believe another's build was its own. A file cargo gave
//! two names within the source (an uplifted binary and its `deps/`
//! original) is copied once and given both names in the new member, as
//! cargo left it.
//!
//! A copy is made in two passes and takes no lock, so that no cargo waits
//! for it and it waits for no cargo. The first copies the source while its
//! holder may be building in it: a file may change or vanish under it. The
//! second ([`update`]) walks the source again and reads nothing more: a
//! file is kept from the first pass only when it is the same inode with the
//! same size, times and mode, and its inode last changed (`ctime`, which
//! nothing can set back) well before the first pass began by the
//! filesystem's own clock ([`fs_clock`]), so no write during the pass can
//! hide behind an equal timestamp. Whatever else changed is left out with
//! its unit (`InFlux`), and cargo's fingerprints make the new member
//! rebuild it.
//!
//! A plain copy can be slower than building from nothing. It is measured as
//! it goes: once a sample (an eighth of the bytes, at least one file) is
//! copied, the whole copy's time is projected, and when that exceeds what a
//! build from nothing was measured to take here, the copy stops and the
//! caller builds cold instead.

use std::{
    collections::{HashMap, HashSet, hash_map::Entry},
    fs::{self, File, FileTimes, OpenOptions},
    io,
    os::{
        fd::AsRawFd,
        unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt},
    },
    path::{Path, PathBuf},
    sync::{
        Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use natives_system::crash;

/// What lies under the parts of a tree to copy, found before anything is
/// copied.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Directories, parents first (relative).
    dirs: Vec<PathBuf>,
    /// Regular files (relative) with their sizes.
    files: Vec<(PathBuf, u64)>,
    /// What each regular file was when listed.
    stamps: HashMap<PathBuf, Stamp>,
    /// Symbolic links (relative) and what they point to.
    links: Vec<(PathBuf, PathBuf)>,
    /// Further names (relative) of files listed under another name.
    names: Vec<(PathBuf, PathBuf)>,
    /// The first name of each file with several, by device and inode.
    named: HashMap<(u64, u64), PathBuf>,
    /// Entries that are neither (FIFOs, sockets, devices): not copied.
    pub skipped: u64,
}

impl Plan {
    /// The bytes of every file.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|(_, bytes)| bytes).sum()
    }

    /// How many files.
    pub fn files(&self) -> u64 {
        self.files.len() as u64
    }

    /// Every regular file (relative).
    pub fn file_names(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(rel, _)| rel.as_path())
    }

    /// Every further name (relative) of a file with several, with the file's
    /// first name (as [`Plan::file_names`] gives it).
    pub fn further_names(&self) -> impl Iterator<Item = (&Path, &Path)> {
        self.names
            .iter()
            .map(|(further, first)| (further.as_path(), first.as_path()))
    }

    /// The first file (relative), if any.
    pub fn first_file(&self) -> Option<&Path> {
        self.files.first().map(|(rel, _)| rel.as_path())
    }

    /// The directories and regular files only: what a copy without the
    /// source's lock makes (links and further names wait for the update).
    pub fn files_only(&self) -> Plan {
        Plan {
            dirs: self.dirs.clone(),
            files: self.files.clone(),
            ..Plan::default()
        }
    }
}

/// What identifies one state of a file: its inode, size, mode and times.
/// `ctime` is set by the kernel at every change and cannot be set back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mode: meta.mode(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Whether the inode last changed long enough before `since` that no
    /// write from `since` on could have left this stamp.
    fn settled_before(&self, since: Since) -> bool {
        nanos(self.ctime) < nanos(since.at) - since.settle.as_nanos() as i128
    }
}

/// A moment by a filesystem's own clock, and how long before it a file must
/// have last changed for a write from that moment on to show in its stamp
/// there (`ctime` is kept only so finely).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Since {
    at: (i64, i64),
    settle: Duration,
}

/// How long a file must have been left alone, on a filesystem that keeps
/// times finer than a hundredth of a second (ext4, btrfs, XFS, tmpfs...),
/// for a copy of it to be trusted without reading it again: the kernel
/// stamps times from a clock that ticks every 1 to 10 ms, so ten of the
/// slowest ticks.
const SETTLE_FINE: Duration = Duration::from_millis(100);

/// The same where times are kept in whole seconds or in hundredths (FAT):
/// above a second, plus a tick.
const SETTLE_COARSE: Duration = Duration::from_secs(2);

impl Since {
    /// How long files on this filesystem must be left alone to be trusted.
    #[cfg(test)]
    pub fn settle(&self) -> Duration {
        self.settle
    }
}

fn nanos((secs, nsecs): (i64, i64)) -> i128 {
    i128::from(secs) * 1_000_000_000 + i128::from(nsecs)
}

/// The stamps of the files a copy made, by relative path.
pub(super) type Stamps = HashMap<PathBuf, Stamp>;

/// The filesystem's clock under `dir` (the `ctime` of a scratch file
/// written there, removed after): what stamps of files on it are compared
/// with, whatever the machine's clock says. A scratch time that is a whole
/// hundredth of a second says the filesystem keeps times no finer (on one
/// that does, one scratch file in ten million reads so, which only costs
/// trust in recent files).
pub(super) fn fs_clock(dir: &Path) -> Result<Since> {
    let probe = dir.join(".clock-probe");
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&probe)
        .map_err(|err| Error::io(&probe, err))?;
    let meta = file.metadata().map_err(|err| Error::io(&probe, err))?;
    fs::remove_file(&probe).map_err(|err| Error::io(&probe, err))?;
    Ok(Since {
        at: (meta.ctime(), meta.ctime_nsec()),
        settle: settle_for(meta.ctime_nsec()),
    })
}

/// How long files must be left alone on a filesystem whose clock read a
/// scratch file's time with these nanoseconds.
fn settle_for(nanoseconds: i64) -> Duration {
    match nanoseconds % 10_000_000 {
        0 => SETTLE_COARSE,
        _ => SETTLE_FINE,
    }
}

/// The entries of `parts` (relative to `root`; a missing part is left out):
/// a part that is a directory is walked without following links.
pub(super) fn plan(root: &Path, parts: &[PathBuf]) -> Result<Plan> {
    let mut plan = Plan::default();
    for part in parts {
        add(root, part, &mut plan)?;
    }
    Ok(plan)
}

fn add(root: &Path, rel: &Path, plan: &mut Plan) -> Result<()> {
    let path = root.join(rel);
    let meta = match fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(Error::io(&path, err)),
    };
    if meta.is_dir() {
        plan.dirs.push(rel.to_owned());
        let listing = match fs::read_dir(&path) {
            Ok(listing) => listing,
            // Removed since it was seen: a cargo is writing the source.
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(Error::io(&path, err)),
        };
        let mut names = Vec::new();
        for item in listing {
            names.push(item.map_err(|err| Error::io(&path, err))?.file_name());
        }
        names.sort();
        for name in names {
            add(root, &rel.join(name), plan)?;
        }
    } else if meta.is_file() {
        if meta.nlink() > 1 {
            let first = plan.named.entry((meta.dev(), meta.ino()));
            if let Entry::Occupied(first) = first {
                plan.names.push((rel.to_owned(), first.get().clone()));
                return Ok(());
            }
            first.or_insert_with(|| rel.to_owned());
        }
        plan.files.push((rel.to_owned(), meta.len()));
        plan.stamps.insert(rel.to_owned(), Stamp::of(&meta));
    } else if meta.is_symlink() {
        let target = fs::read_link(&path).map_err(|err| Error::io(&path, err))?;
        plan.links.push((rel.to_owned(), target));
    } else {
        plan.skipped += 1;
    }
    Ok(())
}

/// How the files are copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Method {
    /// `FICLONE`, one clone per file.
    Reflink,
    /// `copy_file_range`, stopped when it is projected to take longer than
    /// this (a build from nothing), if given.
    Copy(Option<Duration>),
}

/// How a copy ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Copied {
    /// Every file still in the source is there, with what each was when
    /// it was copied.
    Whole(Stamps),
    /// Stopped after the sample: the whole copy was projected to take
    /// this long, past the bar.
    TooSlow(Duration),
}

/// Whether the filesystem under `dest_dir` clones `source`'s files:
/// tried on a scratch file in `dest_dir`, removed after.
pub(super) fn reflink_works(source: &Path, dest_dir: &Path) -> Result<bool> {
    let from = File::open(source).map_err(|err| Error::io(source, err))?;
    let probe = dest_dir.join(".reflink-probe");
    let to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&probe)
        .map_err(|err| Error::io(&probe, err))?;
    let works = ficlone(&to, &from).is_ok();
    fs::remove_file(&probe).map_err(|err| Error::io(&probe, err))?;
    Ok(works)
}

/// The crash point a first pass reaches once its sample is copied (what a
/// plain copy is measured on): the new member is partly filled, and the
/// source's lock is not held.
pub(super) const SAMPLED: &str = "pool seed sample copied";

/// Copy what `plan` lists from `source` into `dest` (which exists and is
/// empty) by `method`, reaching [`SAMPLED`] once the sample is copied.
/// Fails with `cancel`'s error once it stops.
pub(super) fn copy(
    source: &Path,
    dest: &Path,
    plan: &Plan,
    method: Method,
    cancel: &CancelToken,
) -> Result<Copied> {
    lay_out(dest, plan)?;
    let sample = sample_len(&plan.files);
    let started = Instant::now();
    let (first, rest) = plan.files.split_at(sample);
    let stamps = Mutex::new(Stamps::new());
    copy_files(source, dest, first, method, cancel, &stamps)?;
    crash::point(SAMPLED);
    if let Method::Copy(Some(bar)) = method {
        let projected = project(started.elapsed(), bytes_of(first), plan.bytes());
        if projected > bar {
            return Ok(Copied::TooSlow(projected));
        }
    }
    copy_files(source, dest, rest, method, cancel, &stamps)?;
    name_again(dest, &plan.names)?;
    Ok(Copied::Whole(
        stamps
            .into_inner()
            .expect("a copying thread does not panic"),
    ))
}

/// Make `plan`'s directories (those that are not there yet) and symbolic
/// links in `dest`.
fn lay_out(dest: &Path, plan: &Plan) -> Result<()> {
    for dir in plan.dirs.iter().filter(|d| !d.as_os_str().is_empty()) {
        let path = dest.join(dir);
        match fs::create_dir(&path) {
            Err(err) if err.kind() != io::ErrorKind::AlreadyExists => {
                return Err(Error::io(&path, err));
            }
            _ => {}
        }
    }
    for (link, target) in &plan.links {
        let path = dest.join(link);
        std::os::unix::fs::symlink(target, &path).map_err(|err| Error::io(&path, err))?;
    }
    Ok(())
}

/// Give each copied file with several names its further `names` (each
/// with the name it was copied under) in `dest`, as cargo left them in the
/// source.
fn name_again(dest: &Path, names: &[(PathBuf, PathBuf)]) -> Result<()> {
    for (name, first) in names {
        let path = dest.join(name);
        fs::hard_link(dest.join(first), &path).map_err(|err| Error::io(&path, err))?;
    }
    Ok(())
}

/// How many times a copy is brought up to date before what still changes
/// is left out: the first pass, a second for what a cargo command that
/// ended meanwhile wrote, and one more, so that a cargo writing all along
/// costs two extra walks, not an endless chase.
const ROUNDS: usize = 3;

/// Where a copy is brought up to date: the source and the copy, and how the
/// source is listed again.
pub(super) struct Places<'a> {
    pub source: &'a Path,
    pub dest: &'a Path,
    /// The source's profile directories (relative), where what changed is
    /// left out with its unit ([`unit_of`]).
    pub profiles: &'a [PathBuf],
    /// The source listed now.
    pub list: &'a dyn Fn() -> Result<Plan>,
}

/// Bring `places.dest`, copied by a first pass that planned `first` and
/// made `copied` from `since` on (by [`fs_clock`]), to what the source
/// holds, without any lock: the source is listed again, a file is kept
/// only when known unchanged since shortly before it was copied, and
/// whatever changed is copied again once it is old enough to be trusted;
/// the last listing checks every file. After [`ROUNDS`] listings, what
/// still changed is left out with its unit (`InFlux`). Returns the last
/// listing, and what of its files was left out.
pub(super) fn update(
    places: &Places<'_>,
    (first, copied, since): (&Plan, &Stamps, Since),
    method: Method,
    cancel: &CancelToken,
) -> Result<(Plan, LeftOut)> {
    let mut copies: Copies = copied
        .iter()
        .map(|(rel, s)| (rel.clone(), (*s, since)))
        .collect();
    let mut before = first.dirs.clone();
    for round in 1..=ROUNDS {
        let now = (places.list)()?;
        let kept = trusted(&now, &copies);
        drop_untrusted(places.dest, &copies, &kept, (&before, &now))?;
        let stale: Vec<(PathBuf, u64)> = now
            .files
            .iter()
            .filter(|(rel, _)| !kept.contains(rel.as_path()))
            .cloned()
            .collect();
        if stale.is_empty() || round == ROUNDS {
            let left_out = finish(places, (&before, &copies), &now, &kept)?;
            return Ok((now, left_out));
        }
        let since = settled_clock(places.dest, &now, &stale, cancel)?;
        lay_out(places.dest, &now.files_only())?;
        let stamps = Mutex::new(Stamps::new());
        copy_files(places.source, places.dest, &stale, method, cancel, &stamps)?;
        copies.retain(|rel, _| kept.contains(rel.as_path()));
        let stamps = stamps.into_inner().expect("no copying thread panics");
        copies.extend(stamps.into_iter().map(|(rel, s)| (rel, (s, since))));
        before = now.dirs;
    }
    unreachable!("the last round returns")
}

/// What a copy made, by relative path: each file's stamp when copied, and
/// when (by the filesystem's clock) its round of copies began.
type Copies = HashMap<PathBuf, (Stamp, Since)>;

/// The files of `now` whose copy is trusted: the same stamp as when copied,
/// and settled before that copy's round began.
fn trusted<'a>(now: &'a Plan, copies: &Copies) -> HashSet<&'a Path> {
    now.files
        .iter()
        .map(|(rel, _)| rel.as_path())
        .filter(|rel| {
            let stamp = now.stamps.get(*rel);
            let copy = copies.get(*rel);
            matches!((stamp, copy), (Some(s), Some((c, since))) if s == c && s.settled_before(*since))
        })
        .collect()
}

/// Remove from `dest` every copy not `kept`, and every directory the
/// source listed `before` and no longer holds.
fn drop_untrusted(
    dest: &Path,
    copies: &Copies,
    kept: &HashSet<&Path>,
    (before, now): (&[PathBuf], &Plan),
) -> Result<()> {
    for rel in copies.keys().filter(|rel| !kept.contains(rel.as_path())) {
        remove(&dest.join(rel), |p| fs::remove_file(p))?;
    }
    let dirs: HashSet<&PathBuf> = now.dirs.iter().collect();
    for dir in before.iter().filter(|d| !dirs.contains(d)) {
        remove(&dest.join(dir), |p| fs::remove_dir_all(p))?;
    }
    Ok(())
}

/// The filesystem's clock once every file of `stale` (as `now` lists it)
/// is old enough for a copy made from then on to be trusted; it waits at
/// most twice the settling time (a file stamped ahead of the clock is
/// copied all the same, and trusted only if it settles).
fn settled_clock(
    dest: &Path,
    now: &Plan,
    stale: &[(PathBuf, u64)],
    cancel: &CancelToken,
) -> Result<Since> {
    let newest = stale
        .iter()
        .filter_map(|(rel, _)| now.stamps.get(rel))
        .map(|stamp| nanos(stamp.ctime))
        .max()
        .unwrap_or(i128::MIN);
    let started = Instant::now();
    loop {
        let clock = fs_clock(dest)?;
        let settled = newest < nanos(clock.at) - clock.settle.as_nanos() as i128;
        if settled || started.elapsed() >= clock.settle * 2 {
            return Ok(clock);
        }
        cancel.check()?;
        thread::sleep(clock.settle / 4);
    }
}

/// The last round: links made, names given again, and what changed left
/// out with its unit.
fn finish(
    places: &Places<'_>,
    (before, copies): (&[PathBuf], &Copies),
    now: &Plan,
    kept: &HashSet<&Path>,
) -> Result<LeftOut> {
    let in_flux = InFlux::of(places.profiles, (before, copies), now, kept);
    lay_out(places.dest, now)?;
    for unit in &in_flux.units {
        remove(&places.dest.join(unit), |p| {
            match fs::symlink_metadata(p)?.is_dir() {
                true => fs::remove_dir_all(p),
                false => fs::remove_file(p),
            }
        })?;
    }
    let names: Vec<(PathBuf, PathBuf)> = now
        .names
        .iter()
        .filter(|(name, first)| kept.contains(first.as_path()) && in_flux.keeps(name))
        .filter(|(_, first)| in_flux.keeps(first))
        .cloned()
        .collect();
    name_again(places.dest, &names)?;
    Ok(in_flux.left_out(now, kept))
}

/// Files of the source a copy left out, and their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LeftOut {
    pub files: u64,
    pub bytes: u64,
}

/// What a second pass leaves out.
///
/// Cargo keeps each unit's output honest with its fingerprint: before it
/// rebuilds a unit it empties the unit's fingerprint file, and it writes the
/// fingerprint again only once every output of the unit is written; a unit
/// whose fingerprint is empty or missing, or whose output is missing, is
/// rebuilt. So a fingerprint unchanged from shortly before it was copied
/// until the last listing vouches for the unit's output copied, and any
/// file that changed, appeared or vanished belongs to a unit cargo rebuilt
/// or cleaned, or to a cache cargo and rustc rebuild (incremental
/// sessions): leaving out that unit makes the new member's cargo rebuild
/// it, whatever of its output was copied. `tests/pool_seed_in_flux.rs`
/// checks that cargo still empties a fingerprint before it rebuilds.
struct InFlux {
    /// What is left out (relative): unit directories and single files.
    units: HashSet<PathBuf>,
}

impl InFlux {
    /// What changed since the last round (which listed the directories
    /// `before` and made `copies`) by the last listing, `plan`, given the
    /// files `kept`, with their units.
    fn of(
        profiles: &[PathBuf],
        (before, copies): (&[PathBuf], &Copies),
        plan: &Plan,
        kept: &HashSet<&Path>,
    ) -> InFlux {
        let before: HashSet<&PathBuf> = before.iter().collect();
        let dirs: HashSet<&PathBuf> = plan.dirs.iter().collect();
        let listed: HashSet<&Path> = plan.files.iter().map(|(rel, _)| rel.as_path()).collect();
        let changed = plan
            .files
            .iter()
            .map(|(rel, _)| rel.as_path())
            .filter(|rel| !kept.contains(rel))
            .chain(
                copies
                    .keys()
                    .map(PathBuf::as_path)
                    .filter(|rel| !listed.contains(rel)),
            )
            .chain(dirs.symmetric_difference(&before).map(|dir| dir.as_path()));
        let profile_of = |rel: &Path| profiles.iter().find(|p| rel.starts_with(p));
        let units = changed
            .flat_map(|rel| match profile_of(rel) {
                Some(profile) => unit_of(profile, rel),
                None => vec![rel.to_owned()],
            })
            .collect();
        InFlux { units }
    }

    /// Whether `rel` is not left out.
    fn keeps(&self, rel: &Path) -> bool {
        !rel.ancestors().any(|up| self.units.contains(up))
    }

    /// What of `plan`'s files is not in the copy.
    fn left_out(&self, plan: &Plan, kept: &HashSet<&Path>) -> LeftOut {
        let out = |rel: &Path| !kept.contains(rel) || !self.keeps(rel);
        let files = plan.files.iter().filter(|(rel, _)| out(rel));
        files.fold(LeftOut::default(), |sum, (_, bytes)| LeftOut {
            files: sum.files + 1,
            bytes: sum.bytes + bytes,
        })
    }
}

/// What leaves with `rel`, a path in the profile directory `part` that
/// changed during a copy (relative paths): the unit's whole
/// fingerprint directory (`.fingerprint/<unit>`), a build script's
/// directory with its fingerprint (`build/<unit>`), a crate's incremental
/// sessions (`incremental/<crate>`), else the file alone.
fn unit_of(part: &Path, rel: &Path) -> Vec<PathBuf> {
    let mut inside = rel.strip_prefix(part).unwrap_or(rel).iter();
    let (Some(kind), Some(unit)) = (inside.next(), inside.next()) else {
        return vec![rel.to_owned()];
    };
    let dir = |kind: &str| part.join(kind).join(unit);
    match kind.to_str() {
        Some(kind @ (".fingerprint" | "incremental")) => vec![dir(kind)],
        Some("build") => vec![dir("build"), dir(".fingerprint")],
        _ => vec![rel.to_owned()],
    }
}

/// Remove `path` with `how`; one already gone is no error.
fn remove(path: &Path, how: fn(&Path) -> io::Result<()>) -> Result<()> {
    match how(path) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => Err(Error::io(path, err)),
        _ => Ok(()),
    }
}

/// How many of `files` make the sample: an eighth of the bytes, at least
/// one file.
fn sample_len(files: &[(PathBuf, u64)]) -> usize {
    let total: u64 = files.iter().map(|(_, b)| b).sum();
    let mut bytes = 0;
    for (i, (_, size)) in files.iter().enumerate() {
        bytes += size;
        if bytes.saturating_mul(8) >= total {
            return i + 1;
        }
    }
    files.len()
}

fn bytes_of(files: &[(PathBuf, u64)]) -> u64 {
    files.iter().map(|(_, b)| b).sum()
}

/// The time a copy of `total` bytes takes at the rate `copied` took `took`.
fn project(took: Duration, copied: u64, total: u64) -> Duration {
    if copied == 0 {
        return took;
    }
    took.mul_f64(total as f64 / copied as f64)
}

/// Copy `files` by `method`, one file per task, on as many threads as the
/// machine has processors.
fn copy_files(
    source: &Path,
    dest: &Path,
    files: &[(PathBuf, u64)],
    method: Method,
    cancel: &CancelToken,
    stamps: &Mutex<Stamps>,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers = thread::available_parallelism().map_or(2, |n| n.get());
    thread::scope(|scope| {
        let handles: Vec<_> = (0..workers.min(files.len()))
            .map(|_| {
                scope.spawn(|| -> Result<()> {
                    while !failed.load(Ordering::Relaxed) {
                        let Some((rel, _)) = files.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            return Ok(());
                        };
                        let outcome = cancel
                            .check()
                            .and_then(|()| copy_file(&source.join(rel), &dest.join(rel), method));
                        match outcome {
                            Ok(Some(stamp)) => {
                                let mut stamps = stamps.lock().expect("no copying thread panics");
                                stamps.insert(rel.clone(), stamp);
                            }
                            Ok(None) => {}
                            Err(err) => {
                                failed.store(true, Ordering::Relaxed);
                                return Err(err);
                            }
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a copying thread does not panic"))
            .collect::<Result<Vec<()>>>()
            .map(drop)
    })
}

/// Copy one file: cloned when `method` says so (else, or where a clone is
/// refused, copied), its permission bits and times kept; with what the
/// source was when opened, or `None` when it is gone (a cargo removed it).
fn copy_file(from_path: &Path, to_path: &Path, method: Method) -> Result<Option<Stamp>> {
    let mut from = match File::open(from_path) {
        Ok(from) => from,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io(from_path, err)),
    };
    let meta = from.metadata().map_err(|err| Error::io(from_path, err))?;
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to_path)
        .map_err(|err| Error::io(to_path, err))?;
    let cloned = method == Method::Reflink && ficlone(&to, &from).is_ok();
    if !cloned {
        io::copy(&mut from, &mut to).map_err(|err| Error::io(to_path, err))?;
    }
    let times = FileTimes::new()
        .set_accessed(meta.accessed().map_err(|err| Error::io(from_path, err))?)
        .set_modified(meta.modified().map_err(|err| Error::io(from_path, err))?);
    to.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))
        .and_then(|()| to.set_times(times))
        .map_err(|err| Error::io(to_path, err))?;
    Ok(Some(Stamp::of(&meta)))
}

/// Make `to` share `from`'s extents (`FICLONE`).
fn ficlone(to: &File, from: &File) -> io::Result<()> {
    // SAFETY: both descriptors are open files owned by the caller for the
    // whole call; FICLONE reads only the source descriptor's number.
    let rc = unsafe { libc::ioctl(to.as_raw_fd(), libc::FICLONE, from.as_raw_fd()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Flush the filesystem `dir` is on, so what was copied is on disk before
/// a record says it is there.
pub(super) fn sync_filesystem(dir: &Path) -> Result<()> {
    let handle = File::open(dir).map_err(|err| Error::io(dir, err))?;
    nix::unistd::syncfs(&handle).map_err(|errno| Error::io(dir, errno.into()))
}

/// `ENOTSUP` for a reflink asked for where the filesystem cannot clone.
pub(super) fn no_reflink(dir: &Path) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!(
            "{}: the filesystem does not clone files (FICLONE); seed by copy instead",
            dir.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn a_copy_keeps_bytes_modes_times_and_links() {
        let source = natives_testkit::tree(&[
            ("debug/deps/libx.rlib", "rlib bytes"),
            ("debug/.fingerprint/x-1/lib-x", "abc"),
            ("debug/empty/", ""),
            (
                "CACHEDIR.TAG",
                "Signature: 8a477f597d28d172789f06886806bc55",
            ),
        ]);
        let src = source.path();
        let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let rlib = src.join("debug/deps/libx.rlib");
        File::options()
            .write(true)
            .open(&rlib)
            .unwrap()
            .set_modified(old)
            .unwrap();
        fs::set_permissions(&rlib, fs::Permissions::from_mode(0o751)).unwrap();
        symlink("deps/libx.rlib", src.join("debug/libx.rlib")).unwrap();
        fs::hard_link(&rlib, src.join("debug/x-uplifted")).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let parts = [
            PathBuf::from("debug"),
            "CACHEDIR.TAG".into(),
            "absent".into(),
        ];
        let plan = plan(src, &parts).unwrap();
        assert_eq!(plan.files(), 3);
        let copied = copy(
            src,
            dest.path(),
            &plan,
            Method::Copy(None),
            &CancelToken::new(),
        )
        .unwrap();
        assert!(matches!(copied, Copied::Whole(ref stamps) if stamps.len() == 3));
        let copy = dest.path().join("debug/deps/libx.rlib");
        assert_eq!(fs::read(&copy).unwrap(), b"rlib bytes");
        let meta = fs::metadata(&copy).unwrap();
        assert_eq!(meta.modified().unwrap(), old);
        assert_eq!(meta.mode() & 0o7777, 0o751);
        assert_ne!(
            meta.ino(),
            fs::metadata(&rlib).unwrap().ino(),
            "never a hard link"
        );
        assert!(dest.path().join("debug/empty").is_dir());
        let link = fs::read_link(dest.path().join("debug/libx.rlib")).unwrap();
        assert_eq!(link, Path::new("deps/libx.rlib"));
    }

    /// The source listed by `list`, with the profile directory `debug`.
    fn places<'a>(src: &'a Path, dest: &'a Path, list: &'a dyn Fn() -> Result<Plan>) -> Places<'a> {
        static PROFILES: std::sync::LazyLock<[PathBuf; 2]> =
            std::sync::LazyLock::new(|| [PathBuf::from("debug"), PathBuf::from("release")]);
        Places {
            source: src,
            dest,
            profiles: &PROFILES[..],
            list,
        }
    }

    /// A copy is trusted only when its stamp is unchanged and it changed
    /// well before it was copied: a file rewritten in place with its size
    /// and mtime put back is copied again, as is one changed just before the
    /// first pass; what is gone goes, what is new comes, and a file kept is
    /// the very copy the first pass made.
    #[test]
    fn an_update_copies_again_what_changed_even_behind_equal_sizes_and_times() {
        // Whether the first pass began long after every change (only what a
        // stamp tells apart is copied again) or as the files were written
        // (nothing is trusted).
        for long_after in [true, false] {
            let source = natives_testkit::tree(&[
                ("debug/kept", "same"),
                ("debug/rewritten", "old!"),
                ("debug/gone/file", "x"),
            ]);
            let (src, dest) = (source.path(), tempfile::tempdir().unwrap());
            let written = fs::metadata(src.join("debug/kept")).unwrap();
            let since = Since {
                at: match long_after {
                    true => (i64::MAX / 2, 0),
                    false => (written.ctime(), written.ctime_nsec()),
                },
                settle: SETTLE_FINE,
            };
            let first = plan(src, &[PathBuf::from("debug")]).unwrap();
            let (cancel, method) = (CancelToken::new(), Method::Copy(None));
            let copy = copy(src, dest.path(), &first.files_only(), method, &cancel);
            let Ok(Copied::Whole(copied)) = copy else {
                panic!("{copy:?}");
            };
            let rewritten = src.join("debug/rewritten");
            let mtime = fs::metadata(&rewritten).unwrap().modified().unwrap();
            fs::write(&rewritten, "new!").unwrap();
            let file = File::options().write(true).open(&rewritten).unwrap();
            file.set_modified(mtime).unwrap();
            fs::remove_dir_all(src.join("debug/gone")).unwrap();
            fs::write(src.join("debug/added"), "added").unwrap();
            // Which copy: an inode number may be given again to a new file.
            let which = |meta: fs::Metadata| (meta.ino(), meta.ctime(), meta.ctime_nsec());
            let kept_copy = which(fs::metadata(dest.path().join("debug/kept")).unwrap());
            let list = || plan(src, &[PathBuf::from("debug")]);
            let places = places(src, dest.path(), &list);
            let (listed, left) =
                update(&places, (&first, &copied, since), method, &cancel).unwrap();
            assert_eq!(
                (listed.files(), left),
                (3, LeftOut::default()),
                "{long_after}"
            );
            let read = |rel: &str| fs::read_to_string(dest.path().join(rel)).unwrap();
            assert_eq!(read("debug/rewritten"), "new!", "{long_after}");
            assert_eq!(read("debug/added"), "added", "{long_after}");
            assert_eq!(read("debug/kept"), "same", "{long_after}");
            assert!(!dest.path().join("debug/gone").exists(), "{long_after}");
            let copy = which(fs::metadata(dest.path().join("debug/kept")).unwrap());
            assert_eq!(copy == kept_copy, long_after, "kept from the first pass");
        }
    }

    /// What a cargo keeps changing is left out with its unit (each row: a
    /// file rewritten before every listing of the source, and what the new
    /// member must then lack); what does not change is the first pass's
    /// copy, named again as in the source, and what is gone goes.
    #[test]
    fn an_update_leaves_out_the_units_that_keep_changing() {
        let source = natives_testkit::tree(&[
            (
                "CACHEDIR.TAG",
                "Signature: 8a477f597d28d172789f06886806bc55",
            ),
            (".rustc_info.json", "{}"),
            ("debug/.fingerprint/x-1/lib-x", "hash"),
            ("debug/.fingerprint/x-1/lib-x.json", "{}"),
            ("debug/.fingerprint/y-2/lib-y", "hash"),
            ("debug/.fingerprint/z-3/run-build-script", "hash"),
            ("debug/deps/libx-1.rlib", "x"),
            ("debug/deps/liby-2.rlib", "y"),
            ("debug/deps/libgone-5.rlib", "gone"),
            ("debug/build/z-3/output", "cargo:rerun-if-changed=build.rs"),
            ("debug/incremental/x-1/s-1/dep-graph.bin", "graph"),
            ("debug/incremental/x-1/s-1/x.o", "object"),
            ("debug/incremental/y-2/s-2/dep-graph.bin", "graph"),
            ("release/deps/libx-1.rlib", "x"),
        ]);
        let (src, dest) = (source.path(), tempfile::tempdir().unwrap());
        fs::hard_link(
            src.join("debug/deps/liby-2.rlib"),
            src.join("debug/liby.rlib"),
        )
        .unwrap();
        fs::hard_link(
            src.join("debug/deps/libx-1.rlib"),
            src.join("debug/libx.rlib"),
        )
        .unwrap();
        let parts: Vec<PathBuf> = ["debug", "release", ".rustc_info.json", "CACHEDIR.TAG"]
            .map(PathBuf::from)
            .to_vec();
        let first = plan(src, &parts).unwrap();
        let far_after = Since {
            at: (i64::MAX / 2, 0),
            settle: SETTLE_FINE,
        };
        let (cancel, method) = (CancelToken::new(), Method::Copy(None));
        let Ok(Copied::Whole(copied)) =
            copy(src, dest.path(), &first.files_only(), method, &cancel)
        else {
            panic!("the first pass failed");
        };
        let table: [(&str, &[&str]); 7] = [
            ("debug/.fingerprint/x-1/lib-x", &["debug/.fingerprint/x-1"]),
            (
                "debug/deps/libx-1.rlib",
                &["debug/deps/libx-1.rlib", "debug/libx.rlib"],
            ),
            ("debug/deps/libw-4.rmeta", &["debug/deps/libw-4.rmeta"]),
            ("debug/incremental/x-1/s-1/x.o", &["debug/incremental/x-1"]),
            (
                "debug/build/z-3/output",
                &["debug/build/z-3", "debug/.fingerprint/z-3"],
            ),
            ("release/deps/libx-1.rlib", &["release/deps/libx-1.rlib"]),
            (".rustc_info.json", &[".rustc_info.json"]),
        ];
        fs::remove_file(src.join("debug/deps/libgone-5.rlib")).unwrap();
        let listings = std::cell::Cell::new(0);
        let list = || {
            listings.set(listings.get() + 1);
            for (rel, _) in table {
                natives_testkit::write(src, rel, format!("new{}", listings.get()));
            }
            plan(src, &parts)
        };
        let kept_ino = fs::metadata(dest.path().join("debug/deps/liby-2.rlib"))
            .unwrap()
            .ino();
        let places = places(src, dest.path(), &list);
        let (_, left) = update(&places, (&first, &copied, far_after), method, &cancel).unwrap();
        assert_eq!(listings.get(), ROUNDS);
        for (rel, lacks) in table {
            for lacking in lacks {
                assert!(!dest.path().join(lacking).exists(), "{rel}: {lacking}");
            }
        }
        assert!(!dest.path().join("debug/deps/libgone-5.rlib").exists());
        let kept = [
            "CACHEDIR.TAG",
            "debug/.fingerprint/y-2/lib-y",
            "debug/incremental/y-2/s-2/dep-graph.bin",
        ];
        for kept in kept {
            assert_eq!(
                fs::read(src.join(kept)).unwrap(),
                fs::read(dest.path().join(kept)).unwrap()
            );
        }
        let ino = |rel: &str| fs::metadata(dest.path().join(rel)).unwrap().ino();
        assert_eq!(
            ino("debug/deps/liby-2.rlib"),
            kept_ino,
            "the first pass's copy"
        );
        assert_eq!(
            ino("debug/liby.rlib"),
            kept_ino,
            "named again as in the source"
        );
        // The seven files rewritten ("new3"; libx-1.rlib's second name is no
        // file), with lib-x.json, run-build-script and x-1's dep-graph.bin.
        let bytes = 7 * 4 + 2 + 4 + 5;
        assert_eq!(left, LeftOut { files: 10, bytes });
    }

    /// A file is trusted when it last changed longer before the copy than
    /// its filesystem's times can hide a write in.
    #[test]
    fn settling_table() {
        let (fine, coarse) = (settle_for(123_456_789), settle_for(340_000_000));
        assert_eq!(
            (fine, coarse, settle_for(0)),
            (SETTLE_FINE, SETTLE_COARSE, SETTLE_COARSE)
        );
        let stamp = |ctime| Stamp {
            dev: 1,
            ino: 1,
            len: 0,
            mode: 0,
            mtime: ctime,
            ctime,
        };
        let table = [
            ((10, 0), (10, 200_000_000), fine, true),
            ((10, 150_000_000), (10, 200_000_000), fine, false),
            ((9, 999_999_999), (10, 99_999_999), fine, false),
            ((10, 0), (11, 500_000_000), coarse, false),
            ((10, 0), (12, 500_000_000), coarse, true),
        ];
        for (ctime, at, settle, settled) in table {
            let since = Since { at, settle };
            assert_eq!(
                stamp(ctime).settled_before(since),
                settled,
                "{ctime:?} {since:?}"
            );
        }
    }

    #[test]
    fn a_copy_projected_past_the_bar_stops_after_its_sample() {
        let files: Vec<(String, Vec<u8>)> = (0..16)
            .map(|i| (format!("debug/f{i:02}"), vec![7u8; 4096]))
            .collect();
        let named: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let source = natives_testkit::tree(&named);
        let plan = plan(source.path(), &[PathBuf::from("debug")]).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let passed = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let seen = passed.clone();
        crash::install(Some(Box::new(move |point| seen.borrow_mut().push(point))));
        let bar = Method::Copy(Some(Duration::ZERO));
        let copied = copy(source.path(), dest.path(), &plan, bar, &CancelToken::new());
        crash::install(None);
        let copied = copied.unwrap();
        assert_eq!(*passed.borrow(), [SAMPLED]);
        assert!(matches!(copied, Copied::TooSlow(_)), "{copied:?}");
        let left = fs::read_dir(dest.path().join("debug")).unwrap().count();
        assert_eq!(left, 2, "the sample is an eighth of the bytes");
    }

    #[test]
    fn samples_and_projections_table() {
        let files = |sizes: &[u64]| -> Vec<(PathBuf, u64)> {
            sizes.iter().map(|&s| (PathBuf::from("f"), s)).collect()
        };
        let table: [(&[u64], usize); 4] = [
            (&[], 0),
            (&[10], 1),
            (&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 2),
            (&[100, 1, 1], 1),
        ];
        for (sizes, expected) in table {
            assert_eq!(sample_len(&files(sizes)), expected, "{sizes:?}");
        }
        let second = Duration::from_secs(1);
        assert_eq!(project(second, 10, 80), Duration::from_secs(8));
        assert_eq!(project(second, 0, 80), second);
    }
}
