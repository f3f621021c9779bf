//! Python lists of ids, filled on several threads.
//!
//! A result list costs an allocation per list (which needs the GIL) and, per id, a store and an
//! incref of that id's ready-made int. The increfs are read-modify-writes scattered over the
//! megabytes of int objects and take most of the time (CPython's own `list(l)` runs at ~6 ns per
//! item here), and under the GIL they run on one core while the encoding ran on all of them.
//!
//! So, with the calling thread holding the GIL from start to end:
//! 1. every list is allocated, on the calling thread;
//! 2. pool threads store the ints' pointers, without increfs, each counting per id how many it
//!    stored (a dense array of its own);
//! 3. pool threads add up the counts and incref each int that many times, each thread for its own
//!    range of ids (so no int is touched by two threads), each int's increfs back to back on one
//!    cache line.
//!
//! Why this is sound: the pool threads never call into Python; they write only to the item
//! arrays of lists nobody else can see yet (just made, not returned), to their own counts, and to
//! the refcounts of the ints of their own id range, which no other thread touches meanwhile.
//! Since the calling thread keeps the GIL and waits for them, no Python code runs, so neither the
//! garbage collector nor another thread can look at the half-filled lists; the pool's join orders
//! their stores before the lists are handed out. An int's count is added before any list holding
//! it leaves this function, so no refcount is ever too low where Python could see it.
//!
//! On one thread the same two steps pay too (see `fill`): the count array stays in L2 where
//! the ints' refcounts do not.
//!
//! Downside: a count array per thread (4 bytes per vocabulary id), which is why short results
//! keep the plain path.

use crate::vocab::Rank;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;
use rayon::prelude::*;

/// Below this many ids in all, the lists are built on the calling thread the plain way.
pub const PARALLEL_MIN_IDS: usize = 1 << 16;

/// A raw object pointer that may cross to a pool thread: see the module doc for why the threads
/// may write through it.
#[derive(Clone, Copy)]
struct Obj(*mut ffi::PyObject);
// SAFETY: only the item arrays of lists made by `lists_of` are written through these, by one
// thread per item, while the GIL holder waits (module doc).
unsafe impl Send for Obj {}
unsafe impl Sync for Obj {}

/// The ints, for the pool threads to incref: see the module doc.
struct Ints<'a>(&'a [Py<PyAny>]);
// SAFETY: the threads read the pointers (immutable) and incref each int from one thread only,
// while the GIL holder waits (module doc).
unsafe impl Sync for Ints<'_> {}

/// One list's ids, or a run of them, to store from `start` on.
struct Segment<'a> {
    list: Obj,
    start: usize,
    ids: &'a [Rank],
}

/// A new Python list per element of `batch`, the ids as the ints of `ints` (one per id), filled
/// on `threads` pool threads when there are enough ids.
pub fn lists_of<'py>(
    py: Python<'py>,
    ints: &[Py<PyAny>],
    batch: &[&[Rank]],
    threads: usize,
) -> PyResult<Vec<Bound<'py, PyList>>> {
    let mut lists = Unfilled(Vec::with_capacity(batch.len()));
    for ids in batch {
        lists.0.push(new_list(py, ids.len())?);
    }
    fill(py, ints, &lists.0, batch, threads)?;
    Ok(lists.filled())
}

/// Lists made by [`new_list`] whose slots may not all be filled yet. Dropped before
/// [`Unfilled::filled`] (an error on the way), it empties them first, so that freeing them
/// reads none of their slots.
struct Unfilled<'py>(Vec<Bound<'py, PyList>>);

impl<'py> Unfilled<'py> {
    /// The lists, every slot of which is now filled, tracked by the garbage collector again.
    fn filled(mut self) -> Vec<Bound<'py, PyList>> {
        for list in &self.0 {
            // SAFETY: the GIL is held; the list is untracked (`new_list`) and now whole.
            unsafe { ffi::PyObject_GC_Track(list.as_ptr().cast()) };
        }
        std::mem::take(&mut self.0)
    }
}

impl Drop for Unfilled<'_> {
    fn drop(&mut self) {
        for list in &self.0 {
            // SAFETY: the GIL is held (the lists are bound to it); a list of size 0 reads no
            // slot when freed, and its slot array is still freed with it. A slot already
            // stored without its incref is simply not released.
            unsafe { (*list.as_ptr().cast::<ffi::PyVarObject>()).ob_size = 0 };
        }
    }
}

/// Fill `lists`, made by [`new_list`] for `batch` and not yet shown to Python, with the ints of
/// `batch`'s ids: by counts when there are enough ids, on `threads` pool threads (see the
/// module doc).
fn fill(
    _py: Python<'_>,
    ints: &[Py<PyAny>],
    lists: &[Bound<'_, PyList>],
    batch: &[&[Rank]],
    threads: usize,
) -> PyResult<()> {
    // A stored pointer is only increfed afterwards: an id out of range must be caught first.
    if batch
        .iter()
        .flat_map(|ids| ids.iter())
        .any(|&id| id as usize >= ints.len())
    {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "internal error: an id has no int; please report this",
        ));
    }
    let total: usize = batch.iter().map(|ids| ids.len()).sum();
    if total < PARALLEL_MIN_IDS || total > u32::MAX as usize {
        for (list, ids) in lists.iter().zip(batch) {
            for (k, &id) in ids.iter().enumerate() {
                let int = ints[id as usize].as_ptr();
                // SAFETY: the GIL is held (`_py`); `list` has `ids.len()` empty slots
                // (`new_list`); the slot takes the reference the incref makes.
                unsafe {
                    ffi::Py_INCREF(int);
                    ffi::PyList_SET_ITEM(list.as_ptr(), k as ffi::Py_ssize_t, int);
                }
            }
        }
        return Ok(());
    }
    let table = Ints(ints);
    let threads = threads.max(1);
    let groups = split(lists, batch, threads, total);
    let n = ints.len();
    if threads == 1 {
        // The same two steps on this thread: an increment per id in a count array that stays
        // in L2 (400 KB for cl100k), then one add per distinct int, beat an incref per id
        // scattered over the ints' megabytes (en_webster, cl100k, one thread, median of 5
        // alternating runs: list out 214 -> 236 MB/s; Korean 275 -> 291).
        let counts = [store_counted(&groups[0], &table)];
        incref_counted(&table, &counts, 0..n);
        return Ok(());
    }
    crate::pool::install(threads, || {
        let counts: Vec<Vec<u32>> = groups
            .par_iter()
            .map(|group| store_counted(group, &table))
            .collect();
        let per = n.div_ceil(threads).max(1);
        (0..n.div_ceil(per)).into_par_iter().for_each(|part| {
            incref_counted(&table, &counts, part * per..((part + 1) * per).min(n))
        });
    })
    .map_err(super::to_py)
}

/// Store the ints of `group`'s ids in their lists' slots, without increfs; returns how many
/// times each id was stored.
fn store_counted(group: &[Segment], table: &Ints) -> Vec<u32> {
    let mut count = vec![0u32; table.0.len()];
    for seg in group {
        for (k, &id) in seg.ids.iter().enumerate() {
            // SAFETY: `seg.list` is a list of at least `seg.start + seg.ids.len()` empty slots
            // (`new_list`), each written by exactly one segment; the int is alive (held by
            // `ints`) and gets its reference in `incref_counted`.
            unsafe {
                ffi::PyList_SET_ITEM(
                    seg.list.0,
                    (seg.start + k) as ffi::Py_ssize_t,
                    table.0[id as usize].as_ptr(),
                );
            }
            count[id as usize] += 1;
        }
    }
    count
}

/// Incref each int of `ids` as many times as `counts` stored it. The counts are read 16 at a
/// time first and skipped when all zero: a list holds few of a large vocabulary's ids (Korean,
/// o200k: 570 K ids, a few thousand distinct of 200 K), and a test per id was most of this
/// step there.
fn incref_counted(table: &Ints, counts: &[Vec<u32>], ids: std::ops::Range<usize>) {
    const LANES: usize = 16;
    let mut start = ids.start;
    while start < ids.end {
        let end = (start + LANES).min(ids.end);
        let any = counts
            .iter()
            .fold(0, |acc, c| c[start..end].iter().fold(acc, |a, &x| a | x));
        if any != 0 {
            for id in start..end {
                let refs: u32 = counts.iter().map(|c| c[id]).sum();
                for _ in 0..refs {
                    // SAFETY: this thread alone increfs this int while the GIL holder waits.
                    unsafe { ffi::Py_INCREF(table.0[id].as_ptr()) };
                }
            }
        }
        start = end;
    }
}

/// A list of `n` slots left as the allocator gave them, untracked by the garbage collector (a
/// collection set off by the next allocation would read its slots): every slot must be filled
/// before Python sees the list or frees it (the GIL is held from here to the end of [`fill`],
/// so no Python code can, and [`Unfilled`] empties the lists on an error).
///
/// Why not `PyList_New(n)`: it zeroes the slots first, which for one long text is a pass over
/// 8 bytes an id on the calling thread while the pool waits (en_docs, cl100k, 2.7 M ids, best
/// of 15: list out on 2 threads 675-682 -> 709-713 MB/s).
fn new_list(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyList>> {
    // SAFETY: PyList_New returns a new reference or NULL with an exception set.
    let list: Bound<'_, PyList> =
        unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(0))?.downcast_into_unchecked() };
    // SAFETY: the GIL is held; a new list is tracked, and `Unfilled` tracks it again once
    // filled (or it is freed untracked, which list deallocation allows).
    unsafe { ffi::PyObject_GC_UnTrack(list.as_ptr().cast()) };
    if n == 0 {
        return Ok(list);
    }
    let bytes = n
        .checked_mul(std::mem::size_of::<*mut ffi::PyObject>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("too many ids for one list"))?;
    // SAFETY: the GIL is held. The slot array is what `PyList_New(n)` would allocate (with
    // `PyMem_Malloc`, which the list frees with `PyMem_Free`), and a list's size and capacity
    // are its public fields; a list of size 0 has no slot array yet.
    unsafe {
        let items = ffi::PyMem_Malloc(bytes).cast::<*mut ffi::PyObject>();
        if items.is_null() {
            return Err(pyo3::exceptions::PyMemoryError::new_err(
                "no memory for a list of ids",
            ));
        }
        let raw = list.as_ptr().cast::<ffi::PyListObject>();
        (*raw).ob_item = items;
        (*raw).allocated = n as ffi::Py_ssize_t;
        (*raw).ob_base.ob_size = n as ffi::Py_ssize_t;
    }
    Ok(list)
}

/// The batch cut into `threads` groups of about `total / threads` ids each; a long list may be
/// cut between groups.
fn split<'a>(
    lists: &[Bound<'_, PyList>],
    batch: &[&'a [Rank]],
    threads: usize,
    total: usize,
) -> Vec<Vec<Segment<'a>>> {
    let per = total.div_ceil(threads).max(1);
    let mut groups: Vec<Vec<Segment<'a>>> = vec![Vec::new()];
    let mut room = per;
    for (list, &ids) in lists.iter().zip(batch) {
        let mut start = 0;
        while start < ids.len() {
            if room == 0 {
                groups.push(Vec::new());
                room = per;
            }
            let take = room.min(ids.len() - start);
            groups
                .last_mut()
                .expect("one group at least")
                .push(Segment {
                    list: Obj(list.as_ptr()),
                    start,
                    ids: &ids[start..start + take],
                });
            start += take;
            room -= take;
        }
    }
    groups
}
