//! Checking many streams on several threads, their results taken in the order given.
//!
//! Each result is handed over as soon as it and every one before it are done, so output
//! starts with the first streams, whatever is still being checked; and a thread does not
//! start a stream more than [`AHEAD`] a thread beyond the first one not yet handed over, so
//! the results waiting for a slow stream are bounded, not the whole archive.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::mpsc::channel;
use std::sync::{Arc, Condvar, Mutex};

/// How many streams each thread may start beyond the first not yet handed over.
pub const AHEAD: usize = 16;

/// Runs `work(i)` for every `i` in `0..count` on `jobs` threads (at least one), and gives
/// each result to `each` on the calling thread, in the order of `i`. When `each` breaks,
/// no more work starts and the call returns at once: threads still busy (a stream that
/// blocks) are left to end on their own, their results dropped.
pub fn in_order<T, W, E>(count: usize, jobs: usize, work: W, mut each: E) -> ControlFlow<()>
where
    T: Send + 'static,
    W: Fn(usize) -> T + Send + Sync + 'static,
    E: FnMut(usize, T) -> ControlFlow<()>,
{
    let jobs = jobs.clamp(1, count.max(1));
    if jobs == 1 {
        for i in 0..count {
            each(i, work(i))?;
        }
        return ControlFlow::Continue(());
    }
    let window = jobs * AHEAD;
    // (the next stream to start, the first not yet handed over, stopped)
    let shared = Arc::new((Mutex::new((0usize, 0usize, false)), Condvar::new()));
    let work = Arc::new(work);
    let (sender, results) = channel::<(usize, T)>();
    for _ in 0..jobs {
        let shared = Arc::clone(&shared);
        let work = Arc::clone(&work);
        let sender = sender.clone();
        std::thread::spawn(move || {
            let (lock, moved) = &*shared;
            loop {
                let i = {
                    let Ok(mut state) = lock.lock() else { return };
                    loop {
                        let (next, first, stopped) = *state;
                        if stopped || next >= count {
                            return;
                        }
                        if next < first + window {
                            state.0 += 1;
                            break next;
                        }
                        state = match moved.wait(state) {
                            Ok(state) => state,
                            Err(_) => return,
                        };
                    }
                };
                if sender.send((i, work(i))).is_err() {
                    return;
                }
            }
        });
    }
    drop(sender);
    let (lock, moved) = &*shared;
    let stop = || {
        if let Ok(mut state) = lock.lock() {
            state.2 = true;
        }
        moved.notify_all();
    };
    let mut waiting = BTreeMap::new();
    let mut first = 0;
    while first < count {
        let Ok((i, result)) = results.recv() else {
            // Every thread ended before the last result: one panicked.
            stop();
            return ControlFlow::Break(());
        };
        waiting.insert(i, result);
        while let Some(result) = waiting.remove(&first) {
            if each(first, result).is_break() {
                stop();
                return ControlFlow::Break(());
            }
            first += 1;
            if let Ok(mut state) = lock.lock() {
                state.1 = first;
            }
            moved.notify_all();
        }
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn results_come_in_the_order_given_whatever_finishes_first() {
        for jobs in [1, 2, 3, 8] {
            let mut seen = Vec::new();
            let flow = in_order(
                50,
                jobs,
                |i| {
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
            0,
            4,
            |i| i,
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
            count,
            jobs,
            move |i| {
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
    fn a_break_stops_the_work_and_returns_though_a_stream_blocks() {
        let started = Arc::new(AtomicUsize::new(0));
        let s = Arc::clone(&started);
        let mut handed = Vec::new();
        let flow = in_order(
            100,
            2,
            move |i| {
                s.fetch_add(1, Ordering::SeqCst);
                if i == 3 {
                    // Blocks for good, as a FIFO nobody writes would.
                    std::thread::sleep(Duration::from_secs(3600));
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
        std::thread::sleep(Duration::from_millis(100));
        assert!(started.load(Ordering::SeqCst) <= 2 * AHEAD + 2);
    }
}
