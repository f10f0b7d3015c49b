//! Checking many streams on several threads, their results taken in the order given.
//!
//! Each result is handed over as soon as it and every one before it are done, so output
//! starts with the first streams, whatever is still being checked; and a thread does not
//! start a stream more than [`AHEAD`] a thread beyond the first one not yet handed over, so
//! the results waiting for a slow stream are bounded, not the whole archive. The thread that
//! finishes the stream next in order hands over every result ready from there on: no thread
//! waits for another to write, and none is woken for each stream.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::{Condvar, Mutex, PoisonError};

/// How many streams each thread may start beyond the first not yet handed over.
pub const AHEAD: usize = 16;

/// Runs `work(i, item)` for every item of `items` (the `i`th from 0) on `jobs` threads (at
/// least one), and gives each result to `each` in the order of `i`, one at a time, on
/// whichever thread is free to. The items are taken one at a time as the threads need them:
/// `items` may still be finding them (a walk of a directory) while the first are checked.
/// When `each` breaks, no more work starts; the call returns once the work started has
/// ended, with the break.
pub fn in_order<I, S, T, W, E>(items: S, jobs: usize, work: W, each: E) -> ControlFlow<()>
where
    S: Iterator<Item = I> + Send,
    T: Send,
    W: Fn(usize, I) -> T + Sync,
    E: FnMut(usize, T) -> ControlFlow<()> + Send,
{
    let jobs = jobs.max(1);
    if jobs == 1 {
        let mut each = each;
        for (i, item) in items.enumerate() {
            each(i, work(i, item))?;
        }
        return ControlFlow::Continue(());
    }
    let shared = Shared {
        state: Mutex::new(State {
            items,
            taken: 0,
            exhausted: false,
            first: 0,
            stopped: false,
            draining: false,
            ready: BTreeMap::new(),
        }),
        moved: Condvar::new(),
        each: Mutex::new(each),
        window: jobs * AHEAD,
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| shared.worker(&work));
        }
    });
    let stopped = shared
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .stopped;
    if stopped {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}

struct State<S, T> {
    /// What is left to do.
    items: S,
    /// How many items were taken.
    taken: usize,
    /// No item is left.
    exhausted: bool,
    /// The first stream not yet handed over.
    first: usize,
    /// `each` broke.
    stopped: bool,
    /// A thread is handing results over.
    draining: bool,
    /// Results done and not yet handed over.
    ready: BTreeMap<usize, T>,
}

struct Shared<S, T, E> {
    state: Mutex<State<S, T>>,
    /// The first stream not handed over moved, or the work stopped.
    moved: Condvar,
    each: Mutex<E>,
    window: usize,
}

impl<I, S: Iterator<Item = I>, T, E: FnMut(usize, T) -> ControlFlow<()>> Shared<S, T, E> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<S, T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn worker(&self, work: &(impl Fn(usize, I) -> T + Sync)) {
        loop {
            let (i, item) = {
                let mut state = self.lock();
                loop {
                    if state.stopped || state.exhausted {
                        return;
                    }
                    if state.taken < state.first + self.window {
                        if let Some(item) = state.items.next() {
                            state.taken += 1;
                            break (state.taken - 1, item);
                        }
                        state.exhausted = true;
                        self.moved.notify_all();
                        return;
                    }
                    state = self
                        .moved
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            let result = work(i, item);
            let mut state = self.lock();
            if state.stopped {
                return;
            }
            state.ready.insert(i, result);
            if state.draining {
                // The thread handing over takes it when its turn comes.
                continue;
            }
            state.draining = true;
            loop {
                let mut batch = Vec::new();
                let mut at = state.first;
                while let Some(result) = state.ready.remove(&at) {
                    batch.push(result);
                    at += 1;
                }
                if batch.is_empty() {
                    state.draining = false;
                    break;
                }
                let from = state.first;
                drop(state);
                let mut broke = false;
                {
                    let mut each = self.each.lock().unwrap_or_else(PoisonError::into_inner);
                    for (k, result) in batch.into_iter().enumerate() {
                        if each(from + k, result).is_break() {
                            broke = true;
                            break;
                        }
                    }
                }
                state = self.lock();
                state.first = at;
                state.stopped |= broke;
                self.moved.notify_all();
                if broke {
                    state.draining = false;
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn results_come_in_the_order_given_whatever_finishes_first() {
        for jobs in [1, 2, 3, 8] {
            let mut seen = Vec::new();
            let flow = in_order(
                0..50,
                jobs,
                |i, item| {
                    assert_eq!(i, item);
                    // The early ones are the slow ones.
                    std::thread::sleep(Duration::from_micros(((50 - i) * 30) as u64));
                    i * 2
                },
                |i, doubled| {
                    seen.push((i, doubled));
                    ControlFlow::Continue(())
                },
            );
            assert_eq!(flow, ControlFlow::Continue(()));
            let expected: Vec<(usize, usize)> = (0..50).map(|i| (i, i * 2)).collect();
            assert_eq!(seen, expected, "{jobs} jobs");
        }
        let mut none = 0;
        let _ = in_order(
            std::iter::empty::<usize>(),
            4,
            |i, _| i,
            |_, _| {
                none += 1;
                ControlFlow::Continue(())
            },
        );
        assert_eq!(none, 0);
    }

    #[test]
    fn a_slow_first_stream_holds_back_no_more_than_the_window() {
        let started = Arc::new(AtomicUsize::new(0));
        let release = Arc::new((Mutex::new(false), Condvar::new()));
        let (count, jobs) = (1000, 2);
        let (s, r) = (Arc::clone(&started), Arc::clone(&release));
        let watcher = std::thread::spawn(move || {
            // Wait until the threads can go no further, then let the first one end.
            let mut last = usize::MAX;
            loop {
                std::thread::sleep(Duration::from_millis(50));
                let now = s.load(Ordering::SeqCst);
                if now == last {
                    break;
                }
                last = now;
            }
            let (lock, freed) = &*r;
            *lock.lock().expect("lock") = true;
            freed.notify_all();
            last
        });
        let (s, r) = (Arc::clone(&started), Arc::clone(&release));
        let mut handed = 0;
        let flow = in_order(
            0..count,
            jobs,
            move |i, _| {
                s.fetch_add(1, Ordering::SeqCst);
                if i == 0 {
                    let (lock, freed) = &*r;
                    let mut go = lock.lock().expect("lock");
                    while !*go {
                        go = freed.wait(go).expect("wait");
                    }
                }
                i
            },
            |i, got| {
                assert_eq!(i, got);
                handed += 1;
                ControlFlow::Continue(())
            },
        );
        assert_eq!(flow, ControlFlow::Continue(()));
        assert_eq!(handed, count);
        let started_while_blocked = watcher.join().expect("watcher");
        assert_eq!(started_while_blocked, jobs * AHEAD, "the window");
    }

    #[test]
    fn a_break_stops_the_work_started_after_it() {
        let started = Arc::new(AtomicUsize::new(0));
        let s = Arc::clone(&started);
        let mut handed = Vec::new();
        let flow = in_order(
            0..100,
            2,
            move |i, _| {
                s.fetch_add(1, Ordering::SeqCst);
                if i == 3 {
                    std::thread::sleep(Duration::from_millis(200));
                }
                i
            },
            |i, _| {
                handed.push(i);
                if i == 1 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(flow, ControlFlow::Break(()));
        assert_eq!(handed, [0, 1]);
        assert!(started.load(Ordering::SeqCst) <= 2 * AHEAD + 2);
    }
}
