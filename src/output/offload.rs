//! Writing on a second core: [`offloaded`] runs the output's sinks (the filters, pairing and
//! the record writer, whose JSON serialisation is most of a run that writes every message's
//! body) on a thread of their own, fed by an [`Offload`] sink on the decoding thread.
//!
//! Input: the calls a sink takes (records, transactions, exchanges, responses alone, the
//! capture's start), each record moved when it comes by [`Sink::record_owned`] and copied
//! otherwise, handed over in batches. Output: the same calls on the writing thread's sink, in
//! the same order ([`Calls::run`]). Memory: what is in flight, from a call's handing over
//! until its batch, written, is dropped back on the decoding thread, is bounded by the
//! caller's bound in bytes (as [`Record::held_cost`] and [`TransactionRecord::held_cost`]
//! count them; one batch larger than it alone); the decoding thread waits for written
//! batches while it is full. They are dropped there because frees from the writing thread
//! contended for the allocator's lock with the decoding thread's allocations (twice the
//! processor time). Errors: the writing sink's first error stops the writing thread; the
//! decoding thread's next call returns an error of the same kind. A panic on the writing
//! thread ends its side of both channels: the decoding thread stops waiting, and the panic
//! is resumed on it.

use super::Sink;
use crate::kafka::event::Record;
use crate::txn::TransactionRecord;
use crate::vocab::Timestamp;
use std::io;
use std::sync::mpsc;
use std::sync::Mutex;

/// The most bytes (as [`Record::held_cost`] counts them) worth handing to the writing thread
/// ahead of its writing: 32 MiB (on the busy benchmark capture, batches of 2,048 records with
/// up to this much in flight took 0.27 s, 128 with 4 MiB 0.30 s, 32 with 1 MiB 0.35 s: each
/// batch costs a wake-up of the other thread).
pub const IN_FLIGHT: usize = 32 << 20;

/// Calls per batch handed over (one channel message and one lock per batch).
const BATCH: usize = 2048;

/// One call of [`Sink`], owned.
enum Call {
    Record(Record),
    Transaction(Box<TransactionRecord>),
    Exchange(Record, Option<Record>),
    ResponseAlone(Record),
    Unwritten(Record),
    CaptureStart(Timestamp),
    /// The reading side ended without error ([`Offload::end`]).
    End,
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
            Call::End => Ok(()),
        }
    }

    /// What the call holds, as the memory budget counts records.
    fn cost(&self) -> usize {
        match self {
            Call::Record(r) | Call::ResponseAlone(r) | Call::Unwritten(r) => r.held_cost(),
            Call::Exchange(q, r) => q.held_cost() + r.as_ref().map_or(0, Record::held_cost),
            Call::Transaction(t) => t.held_cost(),
            Call::CaptureStart(_) | Call::End => 0,
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

/// The decoding thread's side: a [`Sink`] that puts each call into a batch and hands full
/// batches to the writing thread.
pub struct Offload<'s> {
    tx: mpsc::Sender<(Vec<Call>, usize)>,
    /// Batches written, with their cost, back to be dropped on this thread.
    back: mpsc::Receiver<(Vec<Call>, usize)>,
    batch: Vec<Call>,
    /// What the batch being filled holds.
    cost: usize,
    /// What the batches handed over and not yet dropped hold.
    in_flight: usize,
    /// The most bytes in flight.
    limit: usize,
    shared: &'s Shared,
}

impl Offload<'_> {
    /// Says that the reading ended without error: [`Calls::run`] returns `Ok(true)` after
    /// the calls before it.
    pub fn end(&mut self) -> io::Result<()> {
        self.push(Call::End)
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

    /// Drops a written batch, keeping its vector (emptied) for the next.
    fn drop_written(&mut self, (mut written, cost): (Vec<Call>, usize)) -> Vec<Call> {
        written.clear();
        self.in_flight -= cost;
        written
    }

    /// Hands the batch over, first waiting for written batches while more than the limit
    /// would be in flight.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let cost = std::mem::take(&mut self.cost);
        let mut empty = None;
        while let Ok(w) = self.back.try_recv() {
            empty = Some(self.drop_written(w));
        }
        while self.in_flight > 0 && self.in_flight + cost > self.limit {
            match self.back.recv() {
                Ok(w) => empty = Some(self.drop_written(w)),
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
        self.tx.send((batch, cost)).map_err(|_| self.failed())
    }
}

impl Sink for Offload<'_> {
    fn record(&mut self, rec: &Record) -> io::Result<()> {
        self.push(Call::Record(rec.clone()))
    }

    fn record_owned(&mut self, rec: Record) -> io::Result<()> {
        self.push(Call::Record(rec))
    }

    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()> {
        self.push(Call::Transaction(Box::new(t.clone())))
    }

    fn capture_start(&mut self, ts: Timestamp) {
        // An error shows at the next record.
        let _ = self.push(Call::CaptureStart(ts));
    }

    fn unwritten(&mut self, rec: &Record) -> io::Result<()> {
        self.push(Call::Unwritten(rec.clone()))
    }

    fn response_alone(&mut self, response: &Record) -> io::Result<()> {
        self.push(Call::ResponseAlone(response.clone()))
    }

    fn exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        self.push(Call::Exchange(request.clone(), response.cloned()))
    }
}

/// The writing thread's side: the calls handed over, for [`Calls::run`].
pub struct Calls<'s> {
    rx: mpsc::Receiver<(Vec<Call>, usize)>,
    back: mpsc::Sender<(Vec<Call>, usize)>,
    shared: &'s Shared,
}

impl Calls<'_> {
    /// Applies every call handed over to `sink`, in order, until the decoding thread is done:
    /// `Ok(true)` when it said [`Offload::end`], `Ok(false)` when it stopped without (a read
    /// error), the sink's first error otherwise (nothing is applied after it).
    pub fn run(self, sink: &mut dyn Sink) -> io::Result<bool> {
        let mut ended = false;
        for (batch, cost) in &self.rx {
            for call in &batch {
                if let Err(e) = call.apply(sink) {
                    *self.shared.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.kind());
                    return Err(e);
                }
                ended |= matches!(call, Call::End);
            }
            // Back to be dropped where it was made (gone when the decoding thread is done).
            let _ = self.back.send((batch, cost));
        }
        Ok(ended)
    }
}

/// Runs `read` with an [`Offload`] on this thread and `write` on a second one, with the
/// [`Calls`] `read` hands over, at most `in_flight` bytes of records at a time (as
/// [`Record::held_cost`] counts them; see [`IN_FLIGHT`]); returns both results once both are
/// done. `write` should [`Calls::run`] them through its sinks. A panic on the writing thread
/// is resumed on this one.
pub fn offloaded<T, U>(
    in_flight: usize,
    write: impl FnOnce(Calls<'_>) -> U + Send,
    read: impl FnOnce(&mut Offload<'_>) -> T,
) -> (T, U)
where
    U: Send,
{
    let shared = Shared::default();
    let (tx, rx) = mpsc::channel::<(Vec<Call>, usize)>();
    let (back_tx, back) = mpsc::channel::<(Vec<Call>, usize)>();
    std::thread::scope(|scope| {
        let shared = &shared;
        let writer = scope.spawn(move || {
            write(Calls {
                rx,
                back: back_tx,
                shared,
            })
        });
        let mut offload = Offload {
            tx,
            back,
            batch: Vec::with_capacity(BATCH),
            cost: 0,
            in_flight: 0,
            limit: in_flight,
            shared,
        };
        let t = read(&mut offload);
        // What a failure leaves unsent is lost either way: the writer stopped.
        let _ = offload.hand_over();
        drop(offload);
        let u = match writer.join() {
            Ok(u) => u,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (t, u)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::event::Event;
    use crate::output::VecSink;
    use crate::vocab::{Anomaly, AnomalyKind, Location};

    fn anomaly(frame: u64) -> Record {
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
            event: Event::Anomaly(Box::new(Anomaly::new(
                AnomalyKind::BadBlock,
                format!("n{frame}"),
            ))),
        }
    }

    #[test]
    fn calls_arrive_in_order() {
        let mut inner = VecSink(Vec::new(), Vec::new());
        let (n, ended) = offloaded(
            IN_FLIGHT,
            |calls| calls.run(&mut inner),
            |s| {
                for i in 1..=1000 {
                    if i % 2 == 0 {
                        s.record(&anomaly(i)).unwrap();
                    } else {
                        s.record_owned(anomaly(i)).unwrap();
                    }
                    if i % 7 == 0 {
                        s.exchange(&anomaly(10_000 + i), None).unwrap();
                    }
                }
                s.end().unwrap();
                42
            },
        );
        assert_eq!(n, 42);
        assert!(ended.unwrap(), "the end was said");
        let frames: Vec<u64> = inner.0.iter().map(|r| r.loc.frame).collect();
        let mut want = Vec::new();
        for i in 1..=1000 {
            want.push(i);
            if i % 7 == 0 {
                want.push(10_000 + i);
            }
        }
        assert_eq!(frames, want);
    }

    #[test]
    fn without_end_the_writer_says_so() {
        let mut inner = VecSink(Vec::new(), Vec::new());
        let ((), ended) = offloaded(
            IN_FLIGHT,
            |calls| calls.run(&mut inner),
            |s| s.record(&anomaly(1)).unwrap(),
        );
        assert!(!ended.unwrap());
        assert_eq!(inner.0.len(), 1);
    }

    /// A sink that fails on its third record with a closed pipe.
    struct Closing(usize);

    impl Sink for Closing {
        fn record(&mut self, _: &Record) -> io::Result<()> {
            self.0 += 1;
            if self.0 >= 3 {
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
        let mut inner = Closing(0);
        let (first_error, r) = offloaded(
            1, // one record at a time: the error shows at the next call
            |calls| calls.run(&mut inner),
            |s| {
                (0..100_000)
                    .find_map(|i| s.record_owned(anomaly(i)).err())
                    .map(|e| e.kind())
            },
        );
        assert_eq!(first_error, Some(io::ErrorKind::BrokenPipe));
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(inner.0, 3, "nothing written after the error");
    }

    /// An anomaly record carrying `n` bytes of hex data.
    fn with_data(frame: u64, n: usize) -> Record {
        let mut r = anomaly(frame);
        if let Event::Anomaly(a) = &mut r.event {
            a.data = Some("ab".repeat(n / 2));
        }
        r
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
        // 2,000 anomalies of 128 KiB of hex each (250 MiB in all) through a slow writer with
        // 1 MiB in flight at most: the data is counted, and the decoding side waits.
        let one = Call::Record(with_data(0, 128 << 10)).cost();
        assert!(one > 128 << 10, "an anomaly's data is counted: {one}");
        let limit = 1 << 20;
        let mut inner = Slow(0);
        let (most, r) = offloaded(
            limit,
            |calls| calls.run(&mut inner),
            |s| {
                let mut most = 0;
                for i in 0..2_000 {
                    s.record_owned(with_data(i, 128 << 10)).unwrap();
                    most = most.max(s.in_flight);
                }
                s.end().unwrap();
                most
            },
        );
        assert!(r.unwrap());
        assert_eq!(inner.0, 2_000);
        assert!(most <= limit, "{most} bytes in flight, the bound {limit}");
        assert!(most >= limit / 2, "the bound was used: {most}");
    }
}
