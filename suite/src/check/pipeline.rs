//! Checking a long stream on several threads. What a line yields on its own (its parse,
//! its schemas, the checks within one record) does not depend on the lines before it, so
//! workers compute it for batches of lines; the checks across records then take the
//! batches in stream order on the calling thread. The report is the same, finding for
//! finding, as on one thread.
//!
//! Memory stays bounded: a batch holds at most [`BATCH_BYTES`] of text (or one longer
//! line, itself bounded by the line limit), and no more than [`IN_FLIGHT`] batches a worker
//! are read ahead of the one being taken.

use super::{Checker, Kept, Prepared};
use crate::lines::{Line, LineReader};
use crate::schema::Schemas;
use std::collections::BTreeMap;
use std::io::{self, BufRead};
use std::sync::mpsc::{Receiver, Sender, channel, sync_channel};
use std::sync::{Condvar, Mutex};

/// The text of a batch, at most (one longer line is a batch of its own).
pub(crate) const BATCH_BYTES: usize = 256 << 10;

/// Batches a worker may be ahead of the stream, at most.
const IN_FLIGHT: usize = 3;

/// A line of a batch, its text in the batch's buffer.
enum Owned {
    Text {
        number: usize,
        text: std::ops::Range<usize>,
        newline: bool,
    },
    TooLong {
        number: usize,
        len: u64,
    },
}

/// How many batches have been taken: the reader waits for it to move.
struct Taken {
    count: Mutex<usize>,
    moved: Condvar,
}

/// Feeds every line of `lines` to `checker` with `workers` threads doing the work of each
/// line on its own, the calling thread reading and one more taking the batches in order.
/// The first batch is read before any thread starts: a stream that fits in it is checked
/// on the calling thread alone.
pub(crate) fn check<R: BufRead>(
    mut lines: LineReader<R>,
    checker: &mut Checker,
    workers: usize,
) -> io::Result<()> {
    let max_line = checker.sink.options().max_line_bytes;
    let spare = Mutex::new(Vec::new());
    let Some(first) = read_batch(&mut lines, &spare)? else {
        return Ok(());
    };
    if first.last_of_stream || workers < 2 {
        // On the calling thread the whole record is used where it was parsed: no copy.
        for line in first.lines {
            let prepared = match line {
                Owned::Text {
                    number,
                    text,
                    newline,
                } => Prepared::text(number, &first.text[text], newline, checker.schemas),
                Owned::TooLong { number, len } => Prepared::too_long(number, len, max_line),
            };
            checker.apply(prepared);
        }
        while let Some(line) = lines.next_line()? {
            checker.line(&line);
        }
        return Ok(());
    }
    let schemas: &'static Schemas = checker.schemas;
    let taken = Taken {
        count: Mutex::new(0),
        moved: Condvar::new(),
    };
    let limit = IN_FLIGHT * workers;
    let (to_workers, work) = sync_channel::<(usize, Batch)>(workers);
    let work = Mutex::new(work);
    let (to_checker, done) = sync_channel::<Checked>(limit);
    let (graves, grave_rx): (Vec<_>, Vec<_>) = (0..workers).map(|_| channel()).unzip();
    std::thread::scope(|scope| {
        // Owned here, so that returning ends the workers' wait for work.
        let to_workers = to_workers;
        for (worker, grave) in grave_rx.into_iter().enumerate() {
            let to_checker = to_checker.clone();
            let (work, taken, spare) = (&work, &taken, &spare);
            scope.spawn(move || {
                loop {
                    // Records this worker parsed and the stream is done with.
                    while let Ok(records) = grave.try_recv() {
                        drop(records);
                    }
                    let job = lock(work).recv();
                    let Ok((index, batch)) = job else { return };
                    let prepared = guarded(taken, || {
                        let prepared = batch
                            .lines
                            .into_iter()
                            .map(|line| prepare(line, &batch.text, max_line, schemas))
                            .collect();
                        if batch.text.capacity() <= 2 * BATCH_BYTES {
                            lock(spare).push(batch.text);
                        }
                        prepared
                    });
                    let batch_done = Checked {
                        index,
                        worker,
                        prepared,
                    };
                    if to_checker.send(batch_done).is_err() {
                        return;
                    }
                }
            });
        }
        drop(to_checker);
        let taken = &taken;
        scope.spawn(move || guarded(taken, || take_in_order(&done, checker, taken, &graves)));
        let mut batch = first;
        let mut index = 0;
        loop {
            let last = batch.last_of_stream;
            if to_workers.send((index, batch)).is_err() || last {
                return Ok(());
            }
            index += 1;
            {
                let mut count = lock(&taken.count);
                while *count != ABANDONED && index >= *count + limit {
                    count = taken
                        .moved
                        .wait(count)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
                if *count == ABANDONED {
                    return Ok(());
                }
            }
            batch = match read_batch(&mut lines, &spare)? {
                Some(batch) => batch,
                None => return Ok(()),
            };
        }
    })
}

/// The count of batches taken once a thread has given up: every other thread stops.
const ABANDONED: usize = usize::MAX;

/// Runs `work`; should it panic, tells every thread to stop before passing the panic on,
/// so that no thread waits for a batch that will never come.
fn guarded<T>(taken: &Taken, work: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(value) => value,
        Err(panic) => {
            *lock(&taken.count) = ABANDONED;
            taken.moved.notify_all();
            std::panic::resume_unwind(panic)
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Takes the batches as they come and applies them in stream order.
fn take_in_order(
    done: &Receiver<Checked>,
    checker: &mut Checker,
    taken: &Taken,
    graves: &[Sender<Vec<Kept>>],
) {
    let mut waiting: BTreeMap<usize, Checked> = BTreeMap::new();
    let mut next = 0;
    for checked in done {
        waiting.insert(checked.index, checked);
        while let Some(batch) = waiting.remove(&next) {
            let records: Vec<_> = batch
                .prepared
                .into_iter()
                .filter_map(|prepared| checker.apply(prepared))
                .collect();
            // Freed by the thread that allocated them: with most allocators a free from
            // another thread contends with that thread's own allocations.
            graves[batch.worker].send(records).ok();
            next += 1;
            let mut count = lock(&taken.count);
            if *count != ABANDONED {
                *count = next;
            }
            taken.moved.notify_all();
        }
    }
}

/// What a line yields on its own, computed on a worker. Only the members the checks across
/// records read are passed on: the rest of the record is freed here, by the thread that
/// allocated it, which is what keeps the allocator from serializing the threads.
fn prepare(line: Owned, text: &[u8], max_line: usize, schemas: &Schemas) -> Prepared {
    match line {
        Owned::Text {
            number,
            text: range,
            newline,
        } => Prepared::text(number, &text[range], newline, schemas).essentials(),
        Owned::TooLong { number, len } => Prepared::too_long(number, len, max_line),
    }
}

/// Lines read together, their text in one buffer: one allocation a batch, not one a line,
/// each freed by the thread that checks the batch.
/// A batch checked line by line, by one worker.
struct Checked {
    index: usize,
    worker: usize,
    prepared: Vec<Prepared>,
}

struct Batch {
    text: Vec<u8>,
    lines: Vec<Owned>,
    /// The stream ended with this batch.
    last_of_stream: bool,
}

/// The next lines, up to [`BATCH_BYTES`] of text; `None` at the end of the stream.
fn read_batch<R: BufRead>(
    lines: &mut LineReader<R>,
    spare: &Mutex<Vec<Vec<u8>>>,
) -> io::Result<Option<Batch>> {
    let mut text = lock(spare)
        .pop()
        .unwrap_or_else(|| Vec::with_capacity(crate::lines::READ_BUFFER));
    text.clear();
    let mut batch = Batch {
        text,
        lines: Vec::new(),
        last_of_stream: false,
    };
    while batch.text.len() + batch.lines.len() < BATCH_BYTES {
        let Some(line) = lines.next_line()? else {
            batch.last_of_stream = true;
            return Ok((!batch.lines.is_empty()).then_some(batch));
        };
        batch.lines.push(match line {
            Line::Text {
                number,
                bytes,
                newline,
            } => {
                let start = batch.text.len();
                batch.text.extend_from_slice(bytes);
                Owned::Text {
                    number,
                    text: start..batch.text.len(),
                    newline,
                }
            }
            Line::TooLong { number, len, .. } => Owned::TooLong { number, len },
        });
    }
    Ok(Some(batch))
}
