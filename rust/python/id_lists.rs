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
    let lists = new_lists(py, batch.iter().copied())?;
    fill(py, ints, &lists, batch, threads)?;
    Ok(lists)
}

/// A list of empty slots for each element of `batch`, for [`fill`] to fill.
pub fn new_lists<'py, 'a>(
    py: Python<'py>,
    batch: impl Iterator<Item = &'a [Rank]>,
) -> PyResult<Vec<Bound<'py, PyList>>> {
    batch.map(|ids| new_list(py, ids.len())).collect()
}

/// Fill `lists`, made by [`new_lists`] from `batch` and not yet shown to Python, with the ints of
/// `batch`'s ids: by counts when there are enough ids, on `threads` pool threads (see the
/// module doc).
pub fn fill(
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

/// Incref each int of `ids` as many times as `counts` stored it.
fn incref_counted(table: &Ints, counts: &[Vec<u32>], ids: std::ops::Range<usize>) {
    for id in ids {
        let refs: u32 = counts.iter().map(|c| c[id]).sum();
        for _ in 0..refs {
            // SAFETY: this thread alone increfs this int while the GIL holder waits.
            unsafe { ffi::Py_INCREF(table.0[id].as_ptr()) };
        }
    }
}

/// A list of `n` empty slots; they must all be filled before Python sees it (the GIL is held
/// from here to the end of [`fill`], so no Python code can).
fn new_list(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyList>> {
    // SAFETY: PyList_New returns a new reference or NULL with an exception set.
    unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyList_New(n as ffi::Py_ssize_t))
            .map(|l| l.downcast_into_unchecked())
    }
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
