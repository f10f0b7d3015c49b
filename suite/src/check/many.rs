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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

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
        items: Mutex::new(Items {
            source: items,
            taken: 0,
            exhausted: false,
        }),
        room: Condvar::new(),
        first: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
        waiting: AtomicUsize::new(0),
        state: Mutex::new(State {
            first: 0,
            draining: false,
            ready: BTreeMap::new(),
        }),
        each: Mutex::new(each),
        window: jobs * AHEAD,
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| shared.worker(&work));
        }
    });
    if shared.stopped.load(Ordering::SeqCst) {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}

/// What is left to do. A thread waiting for the next item (a walk still finding it) holds
/// this lock alone: the results of the others are handed over meanwhile.
struct Items<S> {
    source: S,
    /// How many items were taken.
    taken: usize,
    /// No item is left.
    exhausted: bool,
}

/// The results done and not yet handed over.
struct State<T> {
    /// The first item not yet handed over.
    first: usize,
    /// A thread is handing results over.
    draining: bool,
    ready: BTreeMap<usize, T>,
}

struct Shared<S, T, E> {
    items: Mutex<Items<S>>,
    /// The first item not handed over moved, or the work stopped.
    room: Condvar,
    /// The first item not yet handed over, as last published.
    first: AtomicUsize,
    /// `each` broke.
    stopped: AtomicBool,
    /// How many threads wait for `room`.
    waiting: AtomicUsize,
    state: Mutex<State<T>>,
    each: Mutex<E>,
    window: usize,
}

/// How long a thread ahead by the whole window sleeps before it looks again, at most (it is
/// woken when the first item is handed over).
const RECHECK: Duration = Duration::from_millis(10);

impl<I, S: Iterator<Item = I>, T, E: FnMut(usize, T) -> ControlFlow<()>> Shared<S, T, E> {
    /// Whether a thread may start another item when `taken` are taken.
    fn has_room(&self, taken: usize) -> bool {
        taken < self.first.load(Ordering::SeqCst) + self.window
    }

    /// The next item and its index, or none when there is none or the work stopped.
    fn take(&self) -> Option<(usize, I)> {
        let mut items = self.items.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if self.stopped.load(Ordering::SeqCst) || items.exhausted {
                return None;
            }
            if self.has_room(items.taken) {
                let Some(item) = items.source.next() else {
                    items.exhausted = true;
                    return None;
                };
                items.taken += 1;
                return Some((items.taken - 1, item));
            }
            // Counted before it looks again, so that a hand-over that moves the first item
            // after this look sees a thread to wake (a wake-up costs a system call: none is
            // made when no thread waits, which is almost always).
            self.waiting.fetch_add(1, Ordering::SeqCst);
            if self.has_room(items.taken) {
                self.waiting.fetch_sub(1, Ordering::SeqCst);
                continue;
            }
            items = self
                .room
                .wait_timeout(items, RECHECK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            self.waiting.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn worker(&self, work: &(impl Fn(usize, I) -> T + Sync)) {
        while let Some((i, item)) = self.take() {
            let result = work(i, item);
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if self.stopped.load(Ordering::SeqCst) {
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
                state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.first = at;
                self.first.store(at, Ordering::SeqCst);
                if broke {
                    self.stopped.store(true, Ordering::SeqCst);
                }
                if broke || self.waiting.load(Ordering::SeqCst) > 0 {
                    self.room.notify_all();
                }
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

    #[test]
    fn results_are_handed_over_while_a_thread_waits_for_the_next_item() {
        let (send, receive) = std::sync::mpsc::channel::<usize>();
        let handed = Arc::new(AtomicUsize::new(0));
        let seen_by_producer = Arc::clone(&handed);
        let producer = std::thread::spawn(move || {
            send.send(0).expect("send");
            send.send(1).expect("send");
            // The next item comes only once the first two are handed over, as a walk of a
            // slow directory would: a thread waiting for it must not hold them back.
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while seen_by_producer.load(Ordering::SeqCst) < 2 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the first results waited for the next item"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            send.send(2).expect("send");
        });
        let mut seen = Vec::new();
        let flow = in_order(
            receive.into_iter(),
            2,
            |_, item| {
                // The second is done after the first thread has gone to wait for the third.
                if item == 1 {
                    std::thread::sleep(Duration::from_millis(100));
                }
                item
            },
            |_, item| {
                seen.push(item);
                handed.fetch_add(1, Ordering::SeqCst);
                ControlFlow::Continue(())
            },
        );
        producer
            .join()
            .expect("the producer saw the results in time");
        assert_eq!(flow, ControlFlow::Continue(()));
        assert_eq!(seen, [0, 1, 2]);
    }
}
