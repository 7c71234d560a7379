//! Record filters (`--producer-id`, `--topic`, `--result`, `--errors`, `--stream`), applied
//! before output.
//!
//! Input: records in capture order. Output: the records that pass, to an inner [`Sink`].
//! A request passes when one of its markers matches every marker filter given; its response
//! passes with it (paired by stream and correlation id). With `--errors`, requests are held
//! until their response and both are written only if the response carries a non-zero error
//! code where the other filters point: in a marker of `--producer-id`, in a partition of
//! `--topic`, in a marker whose request says `--result` (a response whose request was not
//! captured has no known result, so `--result` drops it, with `--errors` as without).
//! `--producer-id 7 --errors` shows producer 7's failures, not an exchange where only another
//! producer's marker failed. Anomalies pass, but for `--stream`
//! those of other streams.

use super::Sink;
use crate::kafka::apis::write_txn_markers::{
    TransactionResult, WritableTxnMarker, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use crate::kafka::apis::Body;
use crate::kafka::event::{Event, Record};
use std::collections::{HashMap, HashSet};
use std::io;

/// Most requests held while `--errors` waits for their responses; past it the oldest are
/// dropped.
pub const MAX_HELD_REQUESTS: usize = 100_000;

/// What to keep.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Keep markers of this producer id.
    pub producer_id: Option<i64>,
    /// Keep markers that name this topic.
    pub topic: Option<String>,
    /// Keep markers with this result.
    pub result: Option<TransactionResult>,
    /// Keep only exchanges whose response has a non-zero error code for a marker the other
    /// filters keep.
    pub errors: bool,
    /// Keep only this TCP stream.
    pub stream: Option<u64>,
}

impl Filter {
    /// Whether any filter is set.
    pub fn is_active(&self) -> bool {
        self.producer_id.is_some()
            || self.topic.is_some()
            || self.result.is_some()
            || self.errors
            || self.stream.is_some()
    }

    fn marker_filters(&self) -> bool {
        self.producer_id.is_some() || self.topic.is_some() || self.result.is_some()
    }

    /// Whether `response` carries a non-zero error code in a partition the marker filters
    /// keep: in a marker of the producer id, in a partition of the topic, in a marker whose
    /// request marker has the result (unknown without the request: then no error counts, as
    /// `--result` alone drops such a response).
    fn failed(
        &self,
        response: &WriteTxnMarkersResponse,
        request: Option<&WriteTxnMarkersRequest>,
    ) -> bool {
        response.markers.iter().any(|rm| {
            self.producer_id.is_none_or(|p| rm.producer_id == p)
                && self.result.is_none_or(|r| {
                    request.is_some_and(|req| {
                        req.markers
                            .iter()
                            .any(|m| m.producer_id == rm.producer_id && m.transaction_result == r)
                    })
                })
                && rm.topics.iter().any(|t| {
                    self.topic.as_ref().is_none_or(|n| &t.name == n)
                        && t.partitions.iter().any(|p| p.error_code != 0)
                })
        })
    }

    fn marker_matches(&self, m: &WritableTxnMarker) -> bool {
        self.producer_id.is_none_or(|p| m.producer_id == p)
            && self.result.is_none_or(|r| m.transaction_result == r)
            && self
                .topic
                .as_ref()
                .is_none_or(|t| m.topics.iter().any(|x| &x.name == t))
    }
}

/// A sink that applies a [`Filter`].
pub struct FilterSink<'a> {
    inner: &'a mut dyn Sink,
    filter: Filter,
    /// Requests that passed, by (stream, correlation id), so that their responses pass.
    passed: HashSet<(u64, i32)>,
    /// With `--errors`: requests waiting for their responses.
    held: HashMap<(u64, i32), Record>,
    held_order: std::collections::VecDeque<(u64, i32)>,
    /// Kafka records passed on.
    kept: u64,
}

impl<'a> FilterSink<'a> {
    /// A sink passing what `filter` keeps to `inner`.
    pub fn new(inner: &'a mut dyn Sink, filter: Filter) -> Self {
        FilterSink {
            inner,
            filter,
            passed: HashSet::new(),
            held: HashMap::new(),
            held_order: Default::default(),
            kept: 0,
        }
    }

    /// Kafka records passed on so far (to say when the filters let none through).
    pub fn kept(&self) -> u64 {
        self.kept
    }

    fn pass(&mut self, rec: &Record) -> io::Result<()> {
        if matches!(rec.event, Event::Kafka(_)) {
            self.kept += 1;
        }
        self.inner.record(rec)
    }
}

impl Sink for FilterSink<'_> {
    fn record(&mut self, rec: &Record) -> io::Result<()> {
        let stream = rec.loc.stream.map(|s| s.0);
        if let (Some(want), Some(s)) = (self.filter.stream, stream) {
            if want != s {
                return Ok(());
            }
        }
        let Event::Kafka(k) = &rec.event else {
            return self.pass(rec);
        };
        let key = (stream.unwrap_or(u64::MAX), k.correlation_id);
        match &k.body {
            Body::WriteTxnMarkersRequest(b) => {
                if self.filter.marker_filters()
                    && !b.markers.iter().any(|m| self.filter.marker_matches(m))
                {
                    return Ok(());
                }
                if self.filter.errors {
                    if self.held.len() >= MAX_HELD_REQUESTS {
                        if let Some(old) = self.held_order.pop_front() {
                            self.held.remove(&old);
                        }
                    }
                    self.held.insert(key, rec.clone());
                    self.held_order.push_back(key);
                    return Ok(());
                }
                self.passed.insert(key);
                self.pass(rec)
            }
            Body::WriteTxnMarkersResponse(b) => {
                let request_passed = self.passed.remove(&key);
                let held = self.held.remove(&key);
                if self.filter.errors {
                    let request = held.as_ref().and_then(|r| match &r.event {
                        Event::Kafka(k) => match &k.body {
                            Body::WriteTxnMarkersRequest(req) => Some(req),
                            _ => None,
                        },
                        _ => None,
                    });
                    if !self.filter.failed(b, request) {
                        return Ok(());
                    }
                    if let Some(req) = held {
                        self.pass(&req)?;
                    } else if self.filter.marker_filters() && !k.inferred {
                        // The request was filtered out: so is its response.
                        return Ok(());
                    }
                    return self.pass(rec);
                }
                let body_matches = self.filter.result.is_none()
                    && b.markers.iter().any(|m| {
                        self.filter.producer_id.is_none_or(|p| m.producer_id == p)
                            && self
                                .filter
                                .topic
                                .as_ref()
                                .is_none_or(|t| m.topics.iter().any(|x| &x.name == t))
                    });
                if !self.filter.marker_filters() || request_passed || body_matches {
                    self.pass(rec)
                } else {
                    Ok(())
                }
            }
            // Other APIs: they carry no markers.
            _ => {
                if self.filter.marker_filters() || self.filter.errors {
                    Ok(())
                } else {
                    self.pass(rec)
                }
            }
        }
    }
}
