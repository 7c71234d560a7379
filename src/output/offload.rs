//! Writing on a second core: [`offloaded`] runs a capture's output sinks (the filters,
//! pairing and the record writer, whose JSON serialisation is as much work as the decoding
//! where every message's body is written) on a thread of their own once the records come
//! densely, fed by an [`Offload`] sink on the decoding thread.
//!
//! Input: the calls a sink takes (records, transactions, exchanges, responses alone, the
//! capture's start), each record moved when it comes by [`Sink::record_owned`] and copied
//! otherwise. Output: the same calls on the sinks, in the same order. The calls go straight
//! to the sinks, on the decoding thread, until a window of [`WINDOW`] records comes from
//! fewer than [`SPARSE`] packets per record; then the sinks move to a second thread and the
//! calls follow in batches (`Calls::run`). Records from large frames (few records, most
//! of the work the reading) stay on one thread: moving them to another core's cache cost
//! more than writing them took there.
//!
//! Memory: what is in flight, from a call's handing over until its batch, written, is
//! dropped back on the decoding thread, is bounded by the caller's bound in bytes (as
//! [`Record::held_cost`] and [`TransactionRecord::held_cost`] count them; one batch larger
//! than it alone); the decoding thread waits for written batches while it is full. They are
//! dropped there because frees from the writing thread contended for the allocator's lock
//! with the decoding thread's allocations (twice the processor time). Errors: the sinks'
//! first error is returned by the call that met it, on one thread; on two, the writing
//! thread stops and the decoding thread's next call returns an error of the same kind, and
//! [`offloaded`] returns the error itself. A panic on the writing thread ends its side of
//! both channels: the decoding thread stops waiting, and the panic is resumed on it.

use super::Sink;
use crate::kafka::event::Record;
use crate::txn::TransactionRecord;
use crate::vocab::Timestamp;
use std::io;
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::{Scope, ScopedJoinHandle};

/// The most bytes (as [`Record::held_cost`] counts them) worth handing to the writing thread
/// ahead of its writing: 32 MiB (on the busy benchmark capture, batches of 2,048 records with
/// up to this much in flight took 0.27 s, 128 with 4 MiB 0.30 s, 32 with 1 MiB 0.35 s: each
/// batch costs a wake-up of the other thread).
pub const IN_FLIGHT: usize = 32 << 20;

/// Calls per batch handed over (one channel message and one lock per batch).
const BATCH: usize = 2048;

/// Records per window over which the decoding thread judges whether they come densely.
pub const WINDOW: u64 = 1024;

/// Packets per record (over a window) below which the sinks move to a second thread: the
/// busy benchmark capture's `--all-apis` records come 2 packets apart (0.27 s on two threads
/// against 0.35 s on one), those of the large-frame ones 29 apart (0.055 s against 0.045 s).
pub const SPARSE: u64 = 8;

/// One call of [`Sink`], owned.
enum Call {
    Record(Record),
    Transaction(Box<TransactionRecord>),
    Exchange(Record, Option<Record>),
    ResponseAlone(Record),
    Unwritten(Record),
    CaptureStart(Timestamp),
}

impl Call {
    fn apply(&self, sink: &mut dyn Sink) -> io::Result<()> {
        match self {
            Call::Record(r) => sink.record(r),
            Call::Transaction(t) => sink.transaction(t),
            Call::Exchange(q, r) => sink.exchange(q, r.as_ref()),
            Call::ResponseAlone(r) => sink.response_alone(r),
            Call::Unwritten(r) => sink.unwritten(r),
            Call::CaptureStart(ts) => {
                sink.capture_start(*ts);
                Ok(())
            }
        }
    }

    /// What the call holds, as the memory budget counts records.
    fn cost(&self) -> usize {
        match self {
            Call::Record(r) | Call::ResponseAlone(r) | Call::Unwritten(r) => r.held_cost(),
            Call::Exchange(q, r) => q.held_cost() + r.as_ref().map_or(0, Record::held_cost),
            Call::Transaction(t) => t.held_cost(),
            Call::CaptureStart(_) => 0,
        }
    }
}

/// What the writing thread says of its first error: its kind, for the decoding thread's
/// calls after it.
#[derive(Default)]
struct Shared {
    failed: Mutex<Option<io::ErrorKind>>,
}

impl Shared {
    fn failed(&self) -> Option<io::ErrorKind> {
        *self.failed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The decoding thread's end of a writing thread.
struct Writing<'scope> {
    tx: mpsc::Sender<(Vec<Call>, usize)>,
    /// Batches written, with their cost, back to be dropped on this thread.
    back: mpsc::Receiver<(Vec<Call>, usize)>,
    thread: ScopedJoinHandle<'scope, io::Result<()>>,
}

/// The decoding thread's side: a [`Sink`] that passes each call straight to the sinks, or,
/// once they moved to the writing thread, puts it into a batch and hands full batches over.
pub struct Offload<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    /// The sinks, while they are on this thread.
    here: Option<&'env mut dyn Sink>,
    /// The writing thread, once they moved.
    writing: Option<Writing<'scope>>,
    shared: &'env Shared,
    /// Records passed to the sinks on this thread in the current window, and the frame
    /// numbers of its first and latest.
    window: (u64, Option<(u64, u64)>),
    batch: Vec<Call>,
    /// What the batch being filled holds.
    cost: usize,
    /// What the batches handed over and not yet dropped hold.
    in_flight: usize,
    /// The most bytes in flight.
    limit: usize,
}

impl<'scope, 'env> Offload<'scope, 'env> {
    /// Whether the sinks moved to the writing thread.
    pub fn moved(&self) -> bool {
        self.writing.is_some()
    }

    /// Passes one call to the sinks on this thread, or into the batch.
    fn call(&mut self, call: Call) -> io::Result<()> {
        let Some(sink) = self.here.as_deref_mut() else {
            return self.push(call);
        };
        let r = call.apply(sink);
        if let Call::Record(rec) | Call::Exchange(rec, _) | Call::ResponseAlone(rec) = &call {
            self.judge(rec.loc.frame);
        }
        r
    }

    /// Counts a record passed on this thread; at the end of a window of dense records, moves
    /// the sinks to a writing thread.
    fn judge(&mut self, frame: u64) {
        let (n, span) = &mut self.window;
        *n += 1;
        let (first, last) = span.get_or_insert((frame, frame));
        *last = (*last).max(frame);
        if *n < WINDOW {
            return;
        }
        let dense = last.saturating_sub(*first) < SPARSE * *n;
        self.window = (0, None);
        if dense {
            self.move_sinks();
        }
    }

    /// Starts the writing thread with the sinks.
    fn move_sinks(&mut self) {
        let Some(sink) = self.here.take() else {
            return;
        };
        let (tx, rx) = mpsc::channel::<(Vec<Call>, usize)>();
        let (back_tx, back) = mpsc::channel::<(Vec<Call>, usize)>();
        let shared = self.shared;
        let thread = self.scope.spawn(move || {
            Calls {
                rx,
                back: back_tx,
                shared,
            }
            .run(sink)
        });
        self.writing = Some(Writing { tx, back, thread });
    }

    fn push(&mut self, call: Call) -> io::Result<()> {
        self.cost += call.cost();
        self.batch.push(call);
        if self.batch.len() >= BATCH || self.cost >= self.limit / 4 {
            self.hand_over()
        } else {
            Ok(())
        }
    }

    /// The writing thread's error, as this thread returns it.
    fn failed(&self) -> io::Error {
        let kind = self.shared.failed().unwrap_or(io::ErrorKind::Other);
        io::Error::new(kind, "output failed")
    }

    /// Hands the batch over, first waiting for written batches while more than the limit
    /// would be in flight.
    fn hand_over(&mut self) -> io::Result<()> {
        let Some(w) = &self.writing else {
            return Ok(());
        };
        if self.batch.is_empty() {
            return Ok(());
        }
        let cost = std::mem::take(&mut self.cost);
        let mut empty = None;
        let mut returned = |(mut written, c): (Vec<Call>, usize), in_flight: &mut usize| {
            written.clear();
            *in_flight -= c;
            empty = Some(written);
        };
        while let Ok(b) = w.back.try_recv() {
            returned(b, &mut self.in_flight);
        }
        while self.in_flight > 0 && self.in_flight + cost > self.limit {
            match w.back.recv() {
                Ok(b) => returned(b, &mut self.in_flight),
                // The writing thread stopped (an error, or a panic).
                Err(_) => break,
            }
        }
        if self.shared.failed().is_some() {
            self.batch.clear();
            return Err(self.failed());
        }
        let empty = empty.unwrap_or_else(|| Vec::with_capacity(BATCH));
        let batch = std::mem::replace(&mut self.batch, empty);
        self.in_flight += cost;
        w.tx.send((batch, cost)).map_err(|_| self.failed())
    }

    /// Hands the last batch over and waits for the writing thread, if there is one: its
    /// first error, if any.
    fn finish(mut self) -> io::Result<()> {
        let sent = self.hand_over();
        let Some(w) = self.writing.take() else {
            return Ok(());
        };
        drop(w.tx);
        let written = match w.thread.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        written.and(sent)
    }
}

impl Offload<'_, '_> {
    /// Passes a call by reference: to the sinks here (`here`, then counting the record of
    /// frame `frame`, if any, in the window), or once they moved, its owned copy (`owned`)
    /// into the batch.
    fn pass(
        &mut self,
        frame: Option<u64>,
        here: impl FnOnce(&mut dyn Sink) -> io::Result<()>,
        owned: impl FnOnce() -> Call,
    ) -> io::Result<()> {
        let Some(sink) = self.here.as_deref_mut() else {
            return self.push(owned());
        };
        let r = here(sink);
        if let Some(f) = frame {
            self.judge(f);
        }
        r
    }
}

impl Sink for Offload<'_, '_> {
    fn record(&mut self, rec: &Record) -> io::Result<()> {
        self.pass(
            Some(rec.loc.frame),
            |s| s.record(rec),
            || Call::Record(rec.clone()),
        )
    }

    fn record_owned(&mut self, rec: Record) -> io::Result<()> {
        self.call(Call::Record(rec))
    }

    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()> {
        self.pass(
            None,
            |s| s.transaction(t),
            || Call::Transaction(Box::new(t.clone())),
        )
    }

    fn capture_start(&mut self, ts: Timestamp) {
        // An error shows at the next record.
        let _ = self.call(Call::CaptureStart(ts));
    }

    fn unwritten(&mut self, rec: &Record) -> io::Result<()> {
        self.pass(None, |s| s.unwritten(rec), || Call::Unwritten(rec.clone()))
    }

    fn response_alone(&mut self, response: &Record) -> io::Result<()> {
        self.pass(
            Some(response.loc.frame),
            |s| s.response_alone(response),
            || Call::ResponseAlone(response.clone()),
        )
    }

    fn exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        self.pass(
            Some(response.unwrap_or(request).loc.frame),
            |s| s.exchange(request, response),
            || Call::Exchange(request.clone(), response.cloned()),
        )
    }
}

/// The writing thread's side: the calls handed over.
struct Calls<'env> {
    rx: mpsc::Receiver<(Vec<Call>, usize)>,
    back: mpsc::Sender<(Vec<Call>, usize)>,
    shared: &'env Shared,
}

impl Calls<'_> {
    /// Applies every call handed over to `sink`, in order, until the decoding thread is done;
    /// the sink's first error otherwise (nothing is applied after it).
    fn run(self, sink: &mut dyn Sink) -> io::Result<()> {
        for (batch, cost) in &self.rx {
            for call in &batch {
                if let Err(e) = call.apply(sink) {
                    *self.shared.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.kind());
                    return Err(e);
                }
            }
            // Back to be dropped where it was made (gone when the decoding thread is done).
            let _ = self.back.send((batch, cost));
        }
        Ok(())
    }
}

/// Runs `read` with an [`Offload`] in front of `sinks`: their calls on this thread, or once
/// records come densely on a second one, with at most `in_flight` bytes of records handed
/// over at a time (as [`Record::held_cost`] counts them; see [`IN_FLIGHT`]). Returns `read`'s
/// result once everything it handed over is written, and the sinks' first error on the second
/// thread, if they moved there (on this thread `read` met it). A panic on the writing thread
/// is resumed on this one.
pub fn offloaded<T>(
    sinks: &mut dyn Sink,
    in_flight: usize,
    read: impl FnOnce(&mut Offload<'_, '_>) -> T,
) -> (T, io::Result<()>) {
    let shared = Shared::default();
    std::thread::scope(|scope| {
        let mut offload = Offload {
            scope,
            here: Some(sinks),
            writing: None,
            shared: &shared,
            window: (0, None),
            batch: Vec::new(),
            cost: 0,
            in_flight: 0,
            limit: in_flight,
        };
        let t = read(&mut offload);
        (t, offload.finish())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::event::Event;
    use crate::output::VecSink;
    use crate::vocab::{Anomaly, AnomalyKind, Location};

    /// An anomaly record of frame `frame` carrying `n` bytes of hex data.
    fn anomaly(frame: u64, n: usize) -> Record {
        let mut a = Anomaly::new(AnomalyKind::BadBlock, format!("n{frame}"));
        a.data = (n > 0).then(|| "ab".repeat(n / 2));
        Record {
            loc: Location {
                ts: Timestamp {
                    secs: 0,
                    nanos: 0,
                    digits: 6,
                },
                frame,
                stream: None,
                tunnel: None,
            },
            event: Event::Anomaly(Box::new(a)),
        }
    }

    /// Passes `n` records `gap` frames apart, by value and by reference in turn, and an
    /// exchange every 7th; returns whether the sinks moved and what `inner` got.
    fn pass(n: u64, gap: u64) -> (bool, Vec<u64>) {
        let mut inner = VecSink(Vec::new(), Vec::new());
        let (moved, r) = offloaded(&mut inner, IN_FLIGHT, |s| {
            for i in 1..=n {
                if i % 2 == 0 {
                    s.record(&anomaly(i * gap, 0)).unwrap();
                } else {
                    s.record_owned(anomaly(i * gap, 0)).unwrap();
                }
                if i % 7 == 0 {
                    s.exchange(&anomaly(i * gap + 1, 0), None).unwrap();
                }
            }
            s.moved()
        });
        r.unwrap();
        (moved, inner.0.iter().map(|r| r.loc.frame).collect())
    }

    fn expected(n: u64, gap: u64) -> Vec<u64> {
        let mut want = Vec::new();
        for i in 1..=n {
            want.push(i * gap);
            if i % 7 == 0 {
                want.push(i * gap + 1);
            }
        }
        want
    }

    #[test]
    fn dense_records_move_to_a_second_thread_in_order() {
        let (moved, got) = pass(10_000, 1);
        assert!(moved, "1 packet per record is dense");
        assert_eq!(got, expected(10_000, 1));
    }

    #[test]
    fn sparse_records_stay_on_this_thread() {
        let (moved, got) = pass(10_000, SPARSE * 2);
        assert!(!moved, "{} packets per record is sparse", SPARSE * 2);
        assert_eq!(got, expected(10_000, SPARSE * 2));
    }

    /// A sink that fails on its `n`th record with a closed pipe.
    struct Closing(usize, usize);

    impl Sink for Closing {
        fn record(&mut self, _: &Record) -> io::Result<()> {
            self.0 += 1;
            if self.0 >= self.1 {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            } else {
                Ok(())
            }
        }
        fn transaction(&mut self, _: &TransactionRecord) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_writers_error_reaches_both_threads() {
        // It fails after the move (past the first window), one record in flight at a time:
        // the next call says so, with its kind.
        let mut inner = Closing(0, 2_000);
        let ((first_error, moved), r) = offloaded(&mut inner, 1, |s| {
            let e = (1..100_000)
                .find_map(|i| s.record_owned(anomaly(i, 0)).err())
                .map(|e| e.kind());
            (e, s.moved())
        });
        assert!(moved);
        assert_eq!(first_error, Some(io::ErrorKind::BrokenPipe));
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(inner.0, 2_000, "nothing written after the error");
        // Before the move, the call that met it returns it.
        let mut inner = Closing(0, 3);
        let (first_error, r) = offloaded(&mut inner, IN_FLIGHT, |s| {
            (1..100).find_map(|i| s.record_owned(anomaly(i, 0)).err().map(|e| (i, e.kind())))
        });
        assert_eq!(first_error, Some((3, io::ErrorKind::BrokenPipe)));
        r.unwrap();
    }

    /// A sink that takes its time over each record (a slow reader of the output).
    struct Slow(usize);

    impl Sink for Slow {
        fn record(&mut self, _: &Record) -> io::Result<()> {
            self.0 += 1;
            std::thread::sleep(std::time::Duration::from_micros(50));
            Ok(())
        }
        fn transaction(&mut self, _: &TransactionRecord) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn what_is_in_flight_stays_under_the_bound() {
        // 3,000 anomalies of 128 KiB of hex each (375 MiB in all), dense, through a slow
        // writer with 1 MiB in flight at most: the data is counted, and the decoding side
        // waits.
        let one = Call::Record(anomaly(0, 128 << 10)).cost();
        assert!(one > 128 << 10, "an anomaly's data is counted: {one}");
        let limit = 1 << 20;
        let mut inner = Slow(0);
        let ((most, moved), r) = offloaded(&mut inner, limit, |s| {
            let mut most = 0;
            for i in 0..3_000 {
                s.record_owned(anomaly(i, 128 << 10)).unwrap();
                most = most.max(s.in_flight);
            }
            (most, s.moved())
        });
        r.unwrap();
        assert!(moved);
        assert_eq!(inner.0, 3_000);
        assert!(most <= limit, "{most} bytes in flight, the bound {limit}");
        assert!(most >= limit / 2, "the bound was used: {most}");
    }
}
