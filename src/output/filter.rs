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
//!
//! Records of the other decoded APIs (`--api`, `--all-apis`) are matched on what their bodies
//! name (`Facts`): a producer id anywhere in the body (an EndTxn or AddPartitionsToTxn
//! request's, an InitProducerId response's, a Produce batch's, a Fetch response's aborted
//! transaction or control batch), a topic name or id, and for `--result` an EndTxn request's
//! `committed`. A response passes when it or its request matches, and brings its request along
//! when the request did not pass on its own (an InitProducerId whose response names the
//! producer id); with `--errors`, only responses with a non-zero error code pass, with their
//! request.

use super::Sink;
use crate::kafka::apis::write_txn_markers::{self, TransactionResult};
use crate::kafka::apis::Body;
use crate::kafka::event::{Event, KafkaMessage, MessageKind, Record};
use crate::kafka::partial::{PartialBody, Value};
use crate::vocab::Timestamp;
use std::io;

/// What to keep.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Keep markers of these producer ids (`--producer-id`, repeatable; any of them).
    pub producer_ids: Vec<i64>,
    /// Keep markers that name one of these topics (`--topic`, repeatable; shell globs: `*`,
    /// `?`, `[...]`).
    pub topics: Vec<TopicPattern>,
    /// Keep markers with this result.
    pub result: Option<TransactionResult>,
    /// Keep only exchanges whose response has a non-zero error code for a marker the other
    /// filters keep.
    pub errors: bool,
    /// Keep only these TCP streams (`--stream`, repeatable).
    pub streams: Vec<u64>,
    /// `--since`: keep only records at or after this time.
    pub since: Option<TimeBound>,
    /// `--until`: keep only records at or before this time.
    pub until: Option<TimeBound>,
    /// `--host IP[:PORT]` (repeatable): keep only the records of connections with one of
    /// these at either end (any port when none is given), and the transactions whose
    /// coordinator, marker brokers or partition leaders (as the capture's Metadata gives their
    /// addresses) are one of them; records of no connection pass.
    pub hosts: Vec<(std::net::IpAddr, Option<u16>)>,
    /// `--transactional-id` (repeatable): keep only transaction records (and the anomalies
    /// about them) of these transactional ids; message records are not narrowed by it.
    pub transactional_ids: Vec<String>,
    /// `--outcome` (repeatable): keep only transaction records with one of these outcomes
    /// (`committed`, `aborted`, `open`, `unknown`, or `hanging`: those with `"hanging": true`,
    /// whatever their outcome); message records are not narrowed by it.
    pub outcomes: Vec<String>,
}

/// A `--topic` pattern: a topic name, or a shell glob (`orders-*`, `txn-?`, `[ab]*`).
#[derive(Debug, Clone, PartialEq)]
pub struct TopicPattern(glob::Pattern);

impl TopicPattern {
    /// The pattern of `text`. Errors: a glob that does not parse (an unclosed `[`), in words.
    pub fn new(text: &str) -> Result<Self, String> {
        glob::Pattern::new(text)
            .map(TopicPattern)
            .map_err(|e| format!("`{text}` is not a topic name or glob: {e}"))
    }

    /// Whether `name` matches (case-sensitive, as Kafka's topic names are).
    pub fn matches(&self, name: &str) -> bool {
        self.0.matches(name)
    }
}

/// A `--since`/`--until` bound: a time (RFC 3339), or an offset from the capture's first
/// packet (`+90s`, `+5m`, `+1.5h`, `+250ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBound {
    /// This time.
    At(Timestamp),
    /// This many nanoseconds after the capture's first packet.
    AfterStart(i128),
    /// This time of day (nanoseconds after midnight, UTC, as the records and text lines give
    /// times): the one nearest the capture's first packet; as `--until` with a `--since`, the
    /// first such time at or after it.
    TimeOfDay(i128),
}

/// Nanoseconds in a day.
const DAY_NS: i128 = 86_400 * 1_000_000_000;

impl TimeBound {
    /// Reads `2026-12-01T10:00:00Z` (any RFC 3339 offset; without one, or with a space for
    /// the `T`, UTC), a time of day `08:41:53` or `08:41:53.028865` (UTC, as `--format text`
    /// shows times: the one nearest the capture's first packet) or `+N` with a unit (`ns`,
    /// `us`, `ms`, `s`, `m`, `h`; seconds without one). Errors: anything else, in words.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || {
            // A bare number or duration was most likely an offset without its `+`.
            let plus = text
                .starts_with(|c: char| c.is_ascii_digit())
                .then(|| format!(": for an offset write +{text}"))
                .filter(|_| TimeBound::parse(&format!("+{text}")).is_ok())
                .unwrap_or_default();
            format!(
                "`{text}` is neither a time (2026-12-01T10:00:00Z, UTC without an offset), a time \
                 of day (08:41:53, the one nearest the capture's start) nor an offset from the \
                 capture's start (+90s, +5m, +250ms){plus}"
            )
        };
        if let Some(rel) = text.strip_prefix('+') {
            let split = rel
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rel.len());
            let (num, unit) = rel.split_at(split);
            let value: f64 = num.parse().map_err(|_| bad())?;
            let scale = match unit {
                "ns" => 1.0,
                "us" => 1e3,
                "ms" => 1e6,
                "" | "s" => 1e9,
                "m" => 60e9,
                "h" => 3600e9,
                _ => return Err(bad()),
            };
            let nanos = value * scale;
            if !nanos.is_finite() || nanos > 1e30 {
                return Err(bad());
            }
            return Ok(TimeBound::AfterStart(nanos as i128));
        }
        let at = |secs: i64, nanos: u32| {
            TimeBound::At(Timestamp {
                secs,
                nanos,
                digits: 9,
            })
        };
        if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
            return Ok(at(t.timestamp(), t.timestamp_subsec_nanos()));
        }
        // Without an offset: UTC, as every time the tool writes.
        for format in [
            "%Y-%m-%dT%H:%M:%S%.f",
            "%Y-%m-%d %H:%M:%S%.f",
            "%Y-%m-%dT%H:%M",
        ] {
            if let Ok(t) = chrono::NaiveDateTime::parse_from_str(text, format) {
                use chrono::Timelike;
                if t.nanosecond() >= 1_000_000_000 {
                    return Err(bad()); // second 60: chrono's leap second
                }
                let t = t.and_utc();
                return Ok(at(t.timestamp(), t.timestamp_subsec_nanos()));
            }
        }
        for format in ["%H:%M:%S%.f", "%H:%M"] {
            if let Ok(t) = chrono::NaiveTime::parse_from_str(text, format) {
                use chrono::Timelike;
                if t.nanosecond() >= 1_000_000_000 {
                    return Err(bad());
                }
                let nanos = i128::from(t.num_seconds_from_midnight()) * 1_000_000_000
                    + i128::from(t.nanosecond());
                return Ok(TimeBound::TimeOfDay(nanos));
            }
        }
        Err(bad())
    }

    /// Nanoseconds since the epoch, for a capture whose first packet was at `start`.
    fn nanos(self, start: Option<Timestamp>) -> Option<i128> {
        match self {
            TimeBound::At(t) => Some(t.as_nanos()),
            TimeBound::AfterStart(d) => start.map(|s| s.as_nanos() + d),
            // The such time nearest the capture's first packet (a capture that starts at
            // 23:59:58: 00:00:02 is on its second day, 23:59:59 on its first).
            TimeBound::TimeOfDay(d) => start.map(|s| {
                let at = Self::on_day_of(d, s.as_nanos());
                [at - DAY_NS, at, at + DAY_NS]
                    .into_iter()
                    .min_by_key(|t| (t - s.as_nanos()).abs())
                    .unwrap_or(at)
            }),
        }
    }

    /// Time of day `d` (nanoseconds after midnight, UTC) on the day of `t` (nanoseconds
    /// since the epoch).
    fn on_day_of(d: i128, t: i128) -> i128 {
        t.div_euclid(DAY_NS) * DAY_NS + d
    }

    /// The first time of day `d` at or after `t` (nanoseconds since the epoch): an `--until`
    /// time of day after its `--since`.
    fn first_at_or_after(d: i128, t: i128) -> i128 {
        let at = Self::on_day_of(d, t);
        if at < t {
            at + DAY_NS
        } else {
            at
        }
    }
}

/// The APIs whose decoded bodies can name a producer id (a field `producer_id`: a Produce
/// request's batch headers, a Fetch response's aborted transactions and control batches, the
/// transaction APIs, DescribeProducers, DescribeTransactions and ListTransactions responses).
/// Kept true by the test `body_facts_lie_in_their_api_lists`.
const PRODUCER_ID_APIS: &[i16] = &[0, 1, 22, 24, 25, 26, 27, 28, 61, 65, 66];

/// The APIs whose decoded bodies can name a topic (`name`, `topic` or `topic_id`): Produce,
/// Fetch, Metadata, AddPartitionsToTxn, WriteTxnMarkers, TxnOffsetCommit, DescribeProducers,
/// DescribeTransactions.
const TOPIC_APIS: &[i16] = &[0, 1, 3, 24, 27, 28, 61, 65];

/// The APIs a `--result` can match: EndTxn (`committed`) and WriteTxnMarkers.
const RESULT_APIS: &[i16] = &[26, 27];

/// The APIs whose responses can name a producer id: Fetch (aborted transactions, control
/// batches), InitProducerId, EndTxn (v5+: the producer id and epoch it hands on),
/// WriteTxnMarkers, DescribeProducers, DescribeTransactions, ListTransactions.
const RESPONSE_PRODUCER_ID_APIS: &[i16] = &[1, 22, 26, 27, 61, 65, 66];

impl Filter {
    /// Whether any filter is set.
    pub fn is_active(&self) -> bool {
        !self.producer_ids.is_empty()
            || !self.topics.is_empty()
            || self.result.is_some()
            || self.errors
            || !self.streams.is_empty()
            || self.since.is_some()
            || self.until.is_some()
            || !self.hosts.is_empty()
            || !self.transactional_ids.is_empty()
            || !self.outcomes.is_empty()
    }

    /// Whether a message of API `api_key` could pass the body filters given (`--producer-id`,
    /// `--topic`, `--result`: each must be matched, so an API whose bodies never name what
    /// one of them asks for cannot pass); `true` when none is given. `--anomalies relevant`
    /// leaves out the anomalies about messages that could not have passed (a truncated
    /// Metadata response under `--producer-id`).
    pub fn may_pass_api(&self, api_key: i16) -> bool {
        (self.producer_ids.is_empty() || PRODUCER_ID_APIS.contains(&api_key))
            && (self.topics.is_empty() || TOPIC_APIS.contains(&api_key))
            && (self.result.is_none() || RESULT_APIS.contains(&api_key))
    }

    /// Whether the response to a request of API `api_key` version `version` that the body
    /// filters left out could still pass them (a response passes when it or its request
    /// matches): a Fetch response naming the producer id asked for, say. A `--result` names
    /// nothing a response holds.
    fn response_may_pass(&self, api_key: i16, version: i16) -> bool {
        !self.producer_ids.is_empty()
            && RESPONSE_PRODUCER_ID_APIS.contains(&api_key)
            && (api_key != 26 || version >= 5)
            || !self.topics.is_empty() && TOPIC_APIS.contains(&api_key)
    }

    /// The options of the filters given, as a user typed them (`--producer-id`,
    /// `--outcome`, ...), for a page that says it shows only what they kept.
    pub fn options(&self) -> Vec<&'static str> {
        [
            (!self.producer_ids.is_empty(), "--producer-id"),
            (!self.topics.is_empty(), "--topic"),
            (self.result.is_some(), "--result"),
            (self.errors, "--errors"),
            (!self.streams.is_empty(), "--stream"),
            (self.since.is_some(), "--since"),
            (self.until.is_some(), "--until"),
            (!self.hosts.is_empty(), "--host"),
            (!self.transactional_ids.is_empty(), "--transactional-id"),
            (!self.outcomes.is_empty(), "--outcome"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    /// The filter options given, each with its values as the page shows them
    /// (`--transactional-id nope`, `--outcome aborted, hanging`, `--since +5s`), in the order
    /// of [`Filter::options`]. Values are cut at 100 characters each, and at 10 per option
    /// (`and N more`).
    pub fn described(&self) -> Vec<String> {
        fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
            let mut v: Vec<String> = items
                .iter()
                .take(10)
                .map(|x| show(x).chars().take(100).collect())
                .collect();
            if items.len() > 10 {
                v.push(format!("and {} more", items.len() - 10));
            }
            v.join(", ")
        }
        let bound = |b: &TimeBound| match b {
            TimeBound::At(t) => t.to_rfc3339(),
            TimeBound::AfterStart(ns) => format!("+{} s", *ns as f64 / 1e9),
            TimeBound::TimeOfDay(ns) => {
                let secs = ns / 1_000_000_000;
                format!(
                    "{:02}:{:02}:{:02}.{:09} (the one nearest the capture's start)",
                    secs / 3600,
                    secs / 60 % 60,
                    secs % 60,
                    ns % 1_000_000_000
                )
            }
        };
        let mut out = Vec::new();
        for name in self.options() {
            let values = match name {
                "--producer-id" => list(&self.producer_ids, i64::to_string),
                "--topic" => list(&self.topics, |t| t.0.as_str().to_string()),
                "--result" => match self.result {
                    Some(TransactionResult::Commit) => "COMMIT".to_string(),
                    Some(TransactionResult::Abort) => "ABORT".to_string(),
                    None => String::new(),
                },
                "--stream" => list(&self.streams, u64::to_string),
                "--since" => self.since.as_ref().map_or(String::new(), bound),
                "--until" => self.until.as_ref().map_or(String::new(), bound),
                "--host" => list(&self.hosts, |(ip, port)| match port {
                    Some(p) => std::net::SocketAddr::new(*ip, *p).to_string(),
                    None => ip.to_string(),
                }),
                "--transactional-id" => list(&self.transactional_ids, |t| format!("{t:?}")),
                "--outcome" => list(&self.outcomes, String::clone),
                _ => String::new(),
            };
            out.push(if values.is_empty() {
                name.to_string()
            } else {
                format!("{name} {values}")
            });
        }
        out
    }

    /// Whether a transaction record passes: of the producer id, touching the topic, with the
    /// outcome `--result` names (COMMIT: committed), with an error (`--errors`: any of its
    /// messages got one, a marker of it was left out of its response, or its producer was
    /// fenced), of one of the transactional ids and outcomes asked for. `--stream` does not
    /// apply: a transaction spans connections.
    pub fn transaction_matches(&self, t: &crate::txn::Transaction) -> bool {
        use crate::txn::Outcome;
        self.pid_ok(t.producer_id)
            && (self.topics.is_empty()
                || t.partitions.iter().any(|p| {
                    p.topic.as_deref().is_some_and(|n| self.topic_named(n))
                        || p.topic_id.as_deref().is_some_and(|n| self.topic_named(n))
                }))
            && self.result.is_none_or(|r| match r {
                TransactionResult::Commit => t.outcome == Outcome::Committed,
                TransactionResult::Abort => t.outcome == Outcome::Aborted,
            })
            && (!self.errors
                || !t.errors.is_empty()
                // Ended by its coordinator: its producer fenced, or its timeout.
                || t.reason.is_some()
                // What a person looking for what went wrong looks for too: a transaction
                // hanging at the capture's end, committed in part (an admin's abort), or ended
                // against what its client was told (`accepted_commit_aborted`,
                // `accepted_abort_committed`).
                || t.hanging
                || t.partial_commit
                || (t.end_error.as_deref() == Some("NONE")
                    && matches!(
                        (t.requested, t.outcome),
                        (Some("commit"), Outcome::Aborted) | (Some("abort"), Outcome::Committed)
                    ))
                || t.partitions
                    .iter()
                    .any(|p| p.marker_error.is_some() || (p.marker_left_out && !p.marker_written)))
            && self.txn_ref_matches(t.transactional_id.as_deref(), t.producer_id)
            && (self.outcomes.is_empty()
                || self
                    .outcomes
                    .iter()
                    .any(|o| o == t.outcome.as_str() || (o == "hanging" && t.hanging)))
            && (self.hosts.is_empty()
                || t.coordinator
                    .iter()
                    .chain(t.partitions.iter().filter_map(|p| p.marker_broker.as_ref()))
                    .map(crate::txn::Broker::endpoint)
                    // A partition's leader, where the capture's Metadata gave its address (a
                    // hanging partition's leader got no marker message to name it).
                    .chain(t.partitions.iter().filter_map(|p| {
                        let a = p.leader_address.as_deref()?.parse::<std::net::SocketAddr>();
                        a.ok().map(|a| crate::vocab::Endpoint {
                            ip: a.ip(),
                            port: a.port(),
                        })
                    }))
                    .any(|e| self.host_ok(e)))
    }

    /// Whether endpoint `e` is one of `--host`'s (all pass when none is given).
    /// Whether a `--host` without a port names an outer address of the tunnel the record came
    /// through.
    fn outer_ok(&self, loc: &crate::vocab::Location) -> bool {
        let Some(t) = loc.tunnel else {
            return false;
        };
        t.layers().iter().filter_map(|l| l.outer).any(|(a, b)| {
            self.hosts
                .iter()
                .any(|(ip, port)| port.is_none() && (*ip == a || *ip == b))
        })
    }

    fn host_ok(&self, e: crate::vocab::Endpoint) -> bool {
        self.hosts.is_empty()
            || self
                .hosts
                .iter()
                .any(|(ip, port)| *ip == e.ip && port.is_none_or(|p| p == e.port))
    }

    /// Whether the transaction an anomaly names passes the producer id and transactional id
    /// filters.
    fn txn_ref_matches(&self, tid: Option<&str>, pid: i64) -> bool {
        self.pid_ok(pid)
            && (self.transactional_ids.is_empty()
                || tid.is_some_and(|t| self.transactional_ids.iter().any(|x| x == t)))
    }

    /// Whether producer id `p` passes `--producer-id` (any of them; all when none is given).
    fn pid_ok(&self, p: i64) -> bool {
        self.producer_ids.is_empty() || self.producer_ids.contains(&p)
    }

    fn marker_filters(&self) -> bool {
        !self.producer_ids.is_empty() || !self.topics.is_empty() || self.result.is_some()
    }

    /// Whether one of the `--topic` patterns matches `name`.
    fn topic_named(&self, name: &str) -> bool {
        self.topics.iter().any(|t| t.matches(name))
    }

    /// Whether `name` passes `--topic` (always, without one).
    fn topic_ok(&self, name: &str) -> bool {
        self.topics.is_empty() || self.topic_named(name)
    }

    /// Whether `response` carries a non-zero error code in a partition the marker filters
    /// keep: in a marker of the producer id, in a partition of the topic, in a marker whose
    /// request marker has the result (unknown without the request: then no error counts, as
    /// `--result` alone drops such a response).
    fn failed(&self, response: &[MarkerView], request: Option<&[MarkerView]>) -> bool {
        response.iter().any(|rm| {
            rm.producer_id.is_some_and(|p| self.pid_ok(p))
                && self.result.is_none_or(|r| {
                    request.is_some_and(|req| {
                        req.iter().any(|m| {
                            m.producer_id == rm.producer_id && m.transaction_result == Some(r)
                        })
                    })
                })
                && rm
                    .topics
                    .iter()
                    .any(|(name, error)| *error && self.topic_ok(name))
        })
    }

    fn marker_matches(&self, m: &MarkerView) -> bool {
        (self.producer_ids.is_empty() || m.producer_id.is_some_and(|p| self.pid_ok(p)))
            && self.result.is_none_or(|r| m.transaction_result == Some(r))
            && (self.topics.is_empty() || m.topics.iter().any(|x| self.topic_named(&x.0)))
    }
}

/// One WriteTxnMarkers marker as the filters read it, from a body decoded whole or in part
/// (`truncated`: then what was not captured is `None` or missing).
#[derive(Debug, Default)]
struct MarkerView {
    producer_id: Option<i64>,
    /// A request marker's result.
    transaction_result: Option<TransactionResult>,
    /// Topics by name, and (for a response) whether a partition of it got an error.
    topics: Vec<(String, bool)>,
}

/// The markers of `k` when it is a WriteTxnMarkers message, decoded whole or in part.
fn markers_of(k: &KafkaMessage) -> Option<Vec<MarkerView>> {
    match &k.body {
        Body::WriteTxnMarkersRequest(b) => Some(
            b.markers
                .iter()
                .map(|m| MarkerView {
                    producer_id: Some(m.producer_id),
                    transaction_result: Some(m.transaction_result),
                    topics: m.topics.iter().map(|t| (t.name.clone(), false)).collect(),
                })
                .collect(),
        ),
        Body::WriteTxnMarkersResponse(b) => Some(
            b.markers
                .iter()
                .map(|m| MarkerView {
                    producer_id: Some(m.producer_id),
                    transaction_result: None,
                    topics: m
                        .topics
                        .iter()
                        .map(|t| {
                            let error = t.partitions.iter().any(|p| p.error_code != 0);
                            (t.name.clone(), error)
                        })
                        .collect(),
                })
                .collect(),
        ),
        Body::Partial(b) if k.api_key == write_txn_markers::API_KEY => Some(partial_markers(b)),
        _ => None,
    }
}

/// The markers of a WriteTxnMarkers body decoded in part.
fn partial_markers(b: &PartialBody) -> Vec<MarkerView> {
    b.list("markers")
        .iter()
        .filter_map(Value::fields)
        .map(|m| MarkerView {
            producer_id: Value::get(m, "producer_id").and_then(Value::int),
            transaction_result: match Value::get(m, "transaction_result") {
                Some(Value::Named("COMMIT")) => Some(TransactionResult::Commit),
                Some(Value::Named("ABORT")) => Some(TransactionResult::Abort),
                _ => None,
            },
            topics: Value::list_in(m, "topics")
                .iter()
                .filter_map(Value::fields)
                .filter_map(|t| {
                    let Some(Value::Str(name)) = Value::get(t, "name") else {
                        return None;
                    };
                    let error = Value::list_in(t, "partitions")
                        .iter()
                        .filter_map(Value::fields)
                        .any(|p| matches!(Value::get(p, "error_code"), Some(Value::Error(c)) if *c != 0));
                    Some((name.clone(), error))
                })
                .collect(),
        })
        .collect()
}

/// What the filters look for in a body of an API other than WriteTxnMarkers: every
/// `producer_id`, every topic (`name`, `topic` or `topic_id` strings), whether any `error_code`
/// is non-zero, and an EndTxn request's result (`committed`).
#[derive(Debug, Default)]
struct Facts {
    producer_ids: Vec<i64>,
    topics: Vec<String>,
    error: bool,
    result: Option<TransactionResult>,
}

impl Facts {
    fn of(body: &Body) -> Facts {
        let mut f = Facts::default();
        if let Body::EndTxnRequest(b) = body {
            f.result = Some(if b.committed {
                TransactionResult::Commit
            } else {
                TransactionResult::Abort
            });
        }
        // Walked through the body's own serialisation, as its JSON would be, without building
        // it (a Produce body's batch headers as `serde_json::Value`s cost 1.2 s on a 200 MB
        // capture, three times writing them).
        let _ = serde::Serialize::serialize(
            body,
            facts::Walk {
                facts: &mut f,
                key: facts::Key::Other,
            },
        );
        f
    }
}

/// A `serde` serializer that reads [`Facts`] off a body as it would be serialised to JSON:
/// every integer field named `producer_id`, whether any field whose name ends in
/// `error_code` (`error_code`, `partition_error_code`, ...) is non-zero, every string field
/// named `name`, `topic` or `topic_id`; an array's elements take its field's name. Nothing
/// else is kept, and nothing is allocated but the topics.
mod facts {
    use super::Facts;
    use serde::ser::{self, Serialize};

    /// What a field's name says of its value.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub(super) enum Key {
        ProducerId,
        ErrorCode,
        Topic,
        Other,
    }

    impl Key {
        fn of(name: &str) -> Key {
            match name {
                "producer_id" => Key::ProducerId,
                "name" | "topic" | "topic_id" => Key::Topic,
                n if n.ends_with("error_code") => Key::ErrorCode,
                _ => Key::Other,
            }
        }
    }

    type Error = serde_json::Error;

    pub(super) struct Walk<'f> {
        pub(super) facts: &'f mut Facts,
        pub(super) key: Key,
    }

    impl Walk<'_> {
        fn int(self, n: i64) -> Result<(), Error> {
            match self.key {
                Key::ProducerId => self.facts.producer_ids.push(n),
                Key::ErrorCode => self.facts.error |= n != 0,
                _ => {}
            }
            Ok(())
        }

        fn under(&mut self, key: Key) -> Walk<'_> {
            Walk {
                facts: self.facts,
                key,
            }
        }
    }

    macro_rules! ints {
        ($($f:ident: $t:ty),*) => {$(
            fn $f(self, v: $t) -> Result<(), Error> {
                self.int(i64::try_from(v).unwrap_or(i64::MAX))
            }
        )*};
    }

    impl<'f> ser::Serializer for Walk<'f> {
        type Ok = ();
        type Error = Error;
        type SerializeSeq = Walk<'f>;
        type SerializeTuple = Walk<'f>;
        type SerializeTupleStruct = Walk<'f>;
        type SerializeTupleVariant = Walk<'f>;
        type SerializeMap = Walk<'f>;
        type SerializeStruct = Walk<'f>;
        type SerializeStructVariant = Walk<'f>;

        ints!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
              serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64);

        fn serialize_bool(self, _: bool) -> Result<(), Error> {
            Ok(())
        }
        fn serialize_f32(self, _: f32) -> Result<(), Error> {
            Ok(())
        }
        fn serialize_f64(self, _: f64) -> Result<(), Error> {
            Ok(())
        }
        fn serialize_char(self, _: char) -> Result<(), Error> {
            Ok(())
        }
        fn serialize_str(self, v: &str) -> Result<(), Error> {
            if self.key == Key::Topic {
                self.facts.topics.push(v.to_string());
            }
            Ok(())
        }
        fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
            Ok(())
        }
        fn serialize_none(self) -> Result<(), Error> {
            Ok(())
        }
        fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), Error> {
            v.serialize(self)
        }
        fn serialize_unit(self) -> Result<(), Error> {
            Ok(())
        }
        fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
            Ok(())
        }
        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            v: &'static str,
        ) -> Result<(), Error> {
            self.serialize_str(v)
        }
        fn serialize_newtype_struct<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            v: &T,
        ) -> Result<(), Error> {
            v.serialize(self)
        }
        fn serialize_newtype_variant<T: ?Sized + Serialize>(
            mut self,
            _: &'static str,
            _: u32,
            variant: &'static str,
            v: &T,
        ) -> Result<(), Error> {
            v.serialize(self.under(Key::of(variant)))
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self, Error> {
            Ok(self)
        }
        fn serialize_tuple(self, _: usize) -> Result<Self, Error> {
            Ok(self)
        }
        fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
            Ok(self)
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self, Error> {
            Ok(self)
        }
        fn serialize_map(mut self, _: Option<usize>) -> Result<Self, Error> {
            self.key = Key::Other;
            Ok(self)
        }
        fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
            Ok(self)
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self, Error> {
            Ok(self)
        }
    }

    /// Elements take the key of the field that holds them.
    impl ser::SerializeSeq for Walk<'_> {
        type Ok = ();
        type Error = Error;
        fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
            let key = self.key;
            v.serialize(self.under(key))
        }
        fn end(self) -> Result<(), Error> {
            Ok(())
        }
    }

    /// Tuples are walked as sequences.
    macro_rules! as_seq {
        ($($tr:ident: $m:ident),*) => {$(
            impl ser::$tr for Walk<'_> {
                type Ok = ();
                type Error = Error;
                fn $m<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
                    ser::SerializeSeq::serialize_element(self, v)
                }
                fn end(self) -> Result<(), Error> {
                    Ok(())
                }
            }
        )*};
    }

    as_seq!(SerializeTuple: serialize_element, SerializeTupleStruct: serialize_field,
            SerializeTupleVariant: serialize_field);

    /// A map's keys name its values, as a struct's fields do (a flattened struct is a map).
    impl ser::SerializeMap for Walk<'_> {
        type Ok = ();
        type Error = Error;
        fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<(), Error> {
            self.key = k.serialize(KeyName).unwrap_or(Key::Other);
            Ok(())
        }
        fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
            let key = self.key;
            v.serialize(self.under(key))
        }
        fn end(self) -> Result<(), Error> {
            Ok(())
        }
    }

    impl ser::SerializeStruct for Walk<'_> {
        type Ok = ();
        type Error = Error;
        fn serialize_field<T: ?Sized + Serialize>(
            &mut self,
            name: &'static str,
            v: &T,
        ) -> Result<(), Error> {
            v.serialize(self.under(Key::of(name)))
        }
        fn end(self) -> Result<(), Error> {
            Ok(())
        }
    }

    impl ser::SerializeStructVariant for Walk<'_> {
        type Ok = ();
        type Error = Error;
        fn serialize_field<T: ?Sized + Serialize>(
            &mut self,
            name: &'static str,
            v: &T,
        ) -> Result<(), Error> {
            ser::SerializeStruct::serialize_field(self, name, v)
        }
        fn end(self) -> Result<(), Error> {
            Ok(())
        }
    }

    /// A map key's name, when it is a string.
    struct KeyName;

    /// Methods of [`KeyName`] for keys that are not strings: no name.
    macro_rules! others {
        ($($f:ident: $t:ty),*) => {$(
            fn $f(self, _: $t) -> Result<Key, Error> {
                Ok(Key::Other)
            }
        )*};
    }

    impl ser::Serializer for KeyName {
        type Ok = Key;
        type Error = Error;
        type SerializeSeq = ser::Impossible<Key, Error>;
        type SerializeTuple = ser::Impossible<Key, Error>;
        type SerializeTupleStruct = ser::Impossible<Key, Error>;
        type SerializeTupleVariant = ser::Impossible<Key, Error>;
        type SerializeMap = ser::Impossible<Key, Error>;
        type SerializeStruct = ser::Impossible<Key, Error>;
        type SerializeStructVariant = ser::Impossible<Key, Error>;

        fn serialize_str(self, v: &str) -> Result<Key, Error> {
            Ok(Key::of(v))
        }
        others!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16,
                serialize_i32: i32, serialize_i64: i64, serialize_u8: u8, serialize_u16: u16,
                serialize_u32: u32, serialize_u64: u64, serialize_f32: f32, serialize_f64: f64,
                serialize_char: char, serialize_bytes: &[u8]);
        fn serialize_none(self) -> Result<Key, Error> {
            Ok(Key::Other)
        }
        fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Key, Error> {
            v.serialize(self)
        }
        fn serialize_unit(self) -> Result<Key, Error> {
            Ok(Key::Other)
        }
        fn serialize_unit_struct(self, _: &'static str) -> Result<Key, Error> {
            Ok(Key::Other)
        }
        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            v: &'static str,
        ) -> Result<Key, Error> {
            Ok(Key::of(v))
        }
        fn serialize_newtype_struct<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            v: &T,
        ) -> Result<Key, Error> {
            v.serialize(self)
        }
        fn serialize_newtype_variant<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<Key, Error> {
            Ok(Key::Other)
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
            Err(ser::Error::custom("not a key"))
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
            Err(ser::Error::custom("not a key"))
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, Error> {
            Err(ser::Error::custom("not a key"))
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Error> {
            Err(ser::Error::custom("not a key"))
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
            Err(ser::Error::custom("not a key"))
        }
        fn serialize_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStruct, Error> {
            Err(ser::Error::custom("not a key"))
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Error> {
            Err(ser::Error::custom("not a key"))
        }
    }
}

/// A sink that applies a [`Filter`]. It pairs nothing itself: with a filter active the run
/// holds requests (`crate::Config::hold_requests`), so a response record carries its request
/// and a request never answered comes back as an `Event::Unanswered`.
pub struct FilterSink<'a> {
    inner: &'a mut dyn Sink,
    filter: Filter,
    /// Kafka records passed on.
    kept: u64,
    /// `lso_stuck` verdicts written on their own under `--errors` / `--outcome hanging`
    /// (their transaction not matching).
    /// `refused_request` verdicts passed on without their transaction.
    refused_kept: u64,
    stuck_kept: u64,
    /// With `--topic`: the topic ids that Metadata responses gave that name (at most 1,024).
    topic_ids: Vec<String>,
    /// The time of the capture's first packet (for `--since`/`--until` offsets).
    start: Option<Timestamp>,
    /// The transactions (producer id, epoch) the filter left out last (at most
    /// [`MAX_LEFT_OUT`]): their verdicts, which the view writes right after them, go with
    /// them (a `hanging_transaction` of a committed transaction under `--outcome aborted`).
    left_out: std::collections::VecDeque<TxnKey>,
    /// Judging a record [`Sink::unwritten`] brought: passed on as unwritten.
    unwritten: bool,
    /// Verdicts written before their transaction's record (a stale coordinator epoch, a
    /// failed marker, a stuck last stable offset), held while a filter that only the record
    /// can answer (`--outcome`, `--topic`, `--result`, `--errors`, `--host`) waits for it: at
    /// most [`MAX_LEFT_OUT`], with whether each came unwritten; past that the oldest is
    /// passed on unjudged.
    waiting: std::collections::VecDeque<(Record, bool)>,
    /// The transaction whose record was passed on last: verdicts that follow it are its own.
    last_kept: Option<TxnKey>,
    /// The transactions (producer id, epoch) kept last (at most [`MAX_LEFT_OUT`]): a
    /// `refused_request` verdict, written after the transaction it was meant for, goes with
    /// it.
    kept_recent: std::collections::VecDeque<TxnKey>,
    /// With `--transactional-id`: the first transactional ids of transactions left out (at
    /// most [`MAX_IDS_SEEN`]), to say which there were when none matched.
    ids_seen: Vec<String>,
    /// With [`FilterSink::with_relevant_anomalies`]: the frames of requests decoded and left
    /// out by `--producer-id`, `--topic` or `--result` whose responses could not pass either
    /// (at most [`MAX_LEFT_OUT_REQUESTS`], oldest first): their anomalies (`no_response`, a
    /// response cut short) are left out too.
    left_out_requests: Option<LeftOutRequests>,
}

/// A transaction record as the filter remembers it: its producer id, epoch and first frame
/// (`begin.frame`; a producer id and epoch may hold several transactions).
type TxnKey = (i64, i16, Option<u64>);

/// Whether a verdict's transaction `t` is the transaction `k`: the same producer id and epoch,
/// and the same first frame when the verdict names one (one that names none, a
/// `refused_request` or a `producer_id_conflict`, goes with any of that producer id and
/// epoch).
fn is_txn(k: &TxnKey, t: &crate::vocab::TxnRef) -> bool {
    k.0 == t.producer_id && k.1 == t.producer_epoch && t.begin_frame.is_none_or(|b| k.2 == Some(b))
}

/// Requests left out, by (frame, correlation id): a set to look them up, their order to
/// forget the oldest.
type LeftOutRequests = (
    std::collections::HashSet<(u64, i32)>,
    std::collections::VecDeque<(u64, i32)>,
);

/// Most requests left out whose anomalies are recognised (65,536: under a megabyte).
const MAX_LEFT_OUT_REQUESTS: usize = 65_536;

/// Transactional ids [`FilterSink::ids_seen`] remembers of those left out (8).
pub const MAX_IDS_SEEN: usize = 8;

/// Most transactions left out whose verdicts are recognised (1,024).
const MAX_LEFT_OUT: usize = 1_024;

impl<'a> FilterSink<'a> {
    /// A sink passing what `filter` keeps to `inner`.
    pub fn new(inner: &'a mut dyn Sink, filter: Filter) -> Self {
        FilterSink {
            inner,
            filter,
            kept: 0,
            stuck_kept: 0,
            refused_kept: 0,
            topic_ids: Vec::new(),
            start: None,
            left_out: std::collections::VecDeque::new(),
            unwritten: false,
            waiting: std::collections::VecDeque::new(),
            last_kept: None,
            kept_recent: std::collections::VecDeque::new(),
            ids_seen: Vec::new(),
            left_out_requests: None,
        }
    }

    /// Under `--anomalies relevant`: an anomaly about a request the body filters left out
    /// (its `request_frame`: no response came, its response was cut) is left out with it.
    pub fn with_relevant_anomalies(mut self, relevant: bool) -> Self {
        self.left_out_requests = relevant.then(Default::default);
        self
    }

    /// Notes request `rec`, decoded, as left out by the body filters, when its response could
    /// not pass them either.
    fn left_out_request(&mut self, rec: &Record) {
        let Event::Kafka(k) = &rec.event else {
            return;
        };
        if self.filter.response_may_pass(k.api_key, k.api_version) {
            return;
        }
        // (By frame and correlation id: one packet may carry several requests.)
        let key = (rec.loc.frame, k.correlation_id);
        if let Some((set, order)) = &mut self.left_out_requests {
            if set.insert(key) {
                order.push_back(key);
                if order.len() > MAX_LEFT_OUT_REQUESTS {
                    if let Some(old) = order.pop_front() {
                        set.remove(&old);
                    }
                }
            }
        }
    }

    /// With `--transactional-id`: the first transactional ids of the transactions it left out
    /// (at most eight), each once.
    pub fn ids_seen(&self) -> &[String] {
        &self.ids_seen
    }

    /// Whether a verdict's transaction is judged by filters its record alone can answer.
    fn needs_record(&self) -> bool {
        let f = &self.filter;
        !f.outcomes.is_empty()
            || !f.topics.is_empty()
            || f.result.is_some()
            || f.errors
            || !f.hosts.is_empty()
            || f.since.is_some()
            || f.until.is_some()
    }

    /// Passes on a held verdict as it came (written or unwritten).
    fn release(&mut self, rec: &Record, unwritten: bool) -> io::Result<()> {
        let was = std::mem::replace(&mut self.unwritten, unwritten);
        let r = self.pass(rec);
        self.unwritten = was;
        r
    }

    /// Takes the held verdicts of transaction `key` out: passed on after its record when it
    /// was `kept`, dropped with it when not.
    fn settle(&mut self, key: TxnKey, kept: bool) -> io::Result<()> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(rec, _)| {
                matches!(&rec.event, Event::Anomaly(a)
                if a.transaction.as_ref().is_some_and(|t| is_txn(&key, t)))
            });
        self.waiting = others.into();
        if kept {
            for (rec, unwritten) in &mine {
                self.release(rec, *unwritten)?;
            }
        }
        Ok(())
    }

    /// Kafka records passed on so far (to say when the filters let none through).
    pub fn kept(&self) -> u64 {
        self.kept
    }

    /// Whether `--since` falls after `--until` once the capture's start is known (a time of
    /// day, the one nearest the capture's first packet, or an offset from it, against the
    /// other kind; two times or two offsets are refused before reading): nothing can match.
    pub fn window_backwards(&self) -> bool {
        let (since, until) = self.window();
        since.zip(until).is_some_and(|(s, u)| s > u)
    }

    /// `--since` and `--until` in nanoseconds since the epoch, as far as the capture's start
    /// is known: `--until` as a time of day is the first such time at or after `--since`
    /// (a window from 09:00 to 21:30 is one day's, whatever time the capture starts), else
    /// the one nearest the capture's first packet.
    fn window(&self) -> (Option<i128>, Option<i128>) {
        let start = self.start;
        let since = self.filter.since.and_then(|b| b.nanos(start));
        let until = match (self.filter.until, since) {
            (Some(TimeBound::TimeOfDay(d)), Some(s)) => Some(TimeBound::first_at_or_after(d, s)),
            (u, _) => u.and_then(|b| b.nanos(start)),
        };
        (since, until)
    }

    /// `refused_request` verdicts passed on without their transaction (`--errors`, or none
    /// in the capture): to say so when no transaction passed.
    pub fn refused_kept(&self) -> u64 {
        self.refused_kept
    }

    /// How many `lso_stuck` verdicts were written on their own, their transaction not
    /// matching the filters (`--errors`, `--outcome hanging`).
    pub fn stuck_kept(&self) -> u64 {
        self.stuck_kept
    }

    fn pass(&mut self, rec: &Record) -> io::Result<()> {
        if self.unwritten {
            return self.inner.unwritten(rec);
        }
        if matches!(rec.event, Event::Kafka(_)) {
            self.kept += 1;
        }
        self.inner.record(rec)
    }

    /// The markers of `req` when it is a WriteTxnMarkers request (decoded whole or in part)
    /// that the marker filters keep.
    fn kept_request(&self, req: &Record) -> Option<Vec<MarkerView>> {
        match &req.event {
            Event::Kafka(k) if k.message == MessageKind::Request => {
                markers_of(k).filter(|m| self.request_matches(m))
            }
            _ => None,
        }
    }

    fn request_matches(&self, markers: &[MarkerView]) -> bool {
        !self.filter.marker_filters() || markers.iter().any(|m| self.filter.marker_matches(m))
    }

    /// Whether what a message's body (and, for a response, its request's) names, `facts`,
    /// matches the marker filters.
    fn facts_match(&self, facts: &[&Facts]) -> bool {
        if !self.filter.marker_filters() {
            return true;
        }
        let named = |x: &String| self.filter.topic_named(x) || self.topic_ids.contains(x);
        (self.filter.producer_ids.is_empty()
            || facts.iter().any(|f| {
                f.producer_ids
                    .iter()
                    .any(|p| self.filter.producer_ids.contains(p))
            }))
            && (self.filter.topics.is_empty() || facts.iter().any(|f| f.topics.iter().any(named)))
            && self
                .filter
                .result
                .is_none_or(|r| facts.iter().find_map(|f| f.result) == Some(r))
    }

    /// A record of an API other than WriteTxnMarkers. Each body's [`Facts`] are taken once.
    fn other_api(&mut self, rec: &Record, k: &crate::kafka::event::KafkaMessage) -> io::Result<()> {
        use crate::kafka::event::MessageKind;
        if !self.filter.marker_filters() && !self.filter.errors {
            return self.pass(rec);
        }
        match k.message {
            // With --errors a request waits for its response (the run holds it).
            MessageKind::Request if self.filter.errors => Ok(()),
            MessageKind::Request => {
                if self.facts_match(&[&Facts::of(&k.body)]) {
                    self.pass(rec)
                } else {
                    self.left_out_request(rec);
                    Ok(())
                }
            }
            MessageKind::Response => {
                let request = k.request.as_deref();
                let theirs = request.and_then(|r| match &r.event {
                    Event::Kafka(q) => Some(Facts::of(&q.body)),
                    _ => None,
                });
                let mine = Facts::of(&k.body);
                let both: Vec<&Facts> = std::iter::once(&mine).chain(theirs.as_ref()).collect();
                if !self.facts_match(&both) || (self.filter.errors && !mine.error) {
                    return Ok(());
                }
                // Its request goes first, unless it passed on its own already.
                let passed =
                    !self.filter.errors && theirs.as_ref().is_some_and(|t| self.facts_match(&[t]));
                if let (Some(req), false) = (request, passed) {
                    self.pass(req)?;
                }
                self.pass(rec)
            }
        }
    }
}

impl FilterSink<'_> {
    /// Whether `ts` lies within `--since` and `--until` (a bound from the capture's start
    /// passes everything until the start is known).
    fn in_time(&self, ts: &Timestamp) -> bool {
        self.in_span(ts, ts)
    }

    /// Whether a span from `from` to `to` (a transaction: its first message to its record,
    /// written at its end, at the capture's end while open, or when given up) meets the time
    /// between `--since` and `--until`: a transaction open in the window is in it.
    fn in_span(&self, from: &Timestamp, to: &Timestamp) -> bool {
        let (since, until) = self.window();
        // A window that ends before it begins holds nothing (a span could meet both ends).
        since.is_none_or(|s| to.as_nanos().max(from.as_nanos()) >= s)
            && until.is_none_or(|u| from.as_nanos().min(to.as_nanos()) <= u)
            && since.zip(until).is_none_or(|(s, u)| s <= u)
    }

    /// Learns, from a Metadata response, the ids of the topics `--topic` names.
    fn learn_topic_ids(&mut self, body: &Body) {
        let Body::MetadataResponse(m) = body else {
            return;
        };
        if self.filter.topics.is_empty() {
            return;
        }
        for t in &m.topics {
            if let (Some(name), Some(id), 0) = (&t.name, &t.topic_id, t.error_code) {
                if self.filter.topic_named(name)
                    && !self.topic_ids.contains(id)
                    && self.topic_ids.len() < 1024
                {
                    self.topic_ids.push(id.clone());
                }
            }
        }
    }
}

impl Sink for FilterSink<'_> {
    fn capture_start(&mut self, ts: Timestamp) {
        self.start.get_or_insert(ts);
        self.inner.capture_start(ts)
    }

    fn unwritten(&mut self, rec: &Record) -> io::Result<()> {
        // Judged as a written one would be (a verdict goes with its transaction).
        self.unwritten = true;
        let r = self.record(rec);
        self.unwritten = false;
        r
    }

    fn transaction(&mut self, t: &crate::txn::TransactionRecord) -> io::Result<()> {
        let key = (
            t.transaction.producer_id,
            t.transaction.producer_epoch,
            Some(t.transaction.begin.frame),
        );
        if !self.filter.transaction_matches(&t.transaction)
            || !self.in_span(&t.transaction.begin.ts, &t.loc.ts)
        {
            if let Some(id) = t.transaction.transactional_id.as_deref() {
                // (Only ids the filter did not name: one left out by another filter matched.)
                if !self.filter.transactional_ids.is_empty()
                    && !self.filter.transactional_ids.iter().any(|x| x == id)
                    && self.ids_seen.len() < MAX_IDS_SEEN
                    && !self.ids_seen.iter().any(|s| s == id)
                {
                    self.ids_seen.push(id.to_string());
                }
            }
            if self.left_out.len() >= MAX_LEFT_OUT {
                self.left_out.pop_front();
            }
            self.left_out.push_back(key);
            if self.last_kept == Some(key) {
                self.last_kept = None;
            }
            self.kept_recent.retain(|k| *k != key);
            return self.settle(key, false);
        }
        // Kept: its verdicts with it, and those that name only its producer id and epoch (a
        // transaction left out of the same epoch before it).
        self.left_out.retain(|k| (k.0, k.1) != (key.0, key.1));
        self.kept += 1;
        self.last_kept = Some(key);
        if !self.kept_recent.contains(&key) {
            if self.kept_recent.len() >= MAX_LEFT_OUT {
                self.kept_recent.pop_front();
            }
            self.kept_recent.push_back(key);
        }
        self.inner.transaction(t)?;
        self.settle(key, true)
    }

    fn record(&mut self, rec: &Record) -> io::Result<()> {
        if let Event::Kafka(k) = &rec.event {
            self.learn_topic_ids(&k.body);
        }
        let stream = rec.loc.stream.map(|s| s.0);
        if let Some(s) = stream {
            if !self.filter.streams.is_empty() && !self.filter.streams.contains(&s) {
                return Ok(());
            }
        }
        // (A verdict of the transaction view goes by its transaction's time, below.)
        let verdict = matches!(&rec.event, Event::Anomaly(a) if a.transaction.is_some());
        if !verdict && !self.in_time(&rec.loc.ts) {
            return Ok(());
        }
        // A `refused_request` after its transaction's record, kept: with it, whatever its
        // own connection (a Produce refused by a partition leader --host did not name).
        let refused_kept = matches!(&rec.event, Event::Anomaly(a)
        if a.kind == crate::vocab::AnomalyKind::RefusedRequest
            && a.transaction.as_ref().is_some_and(|t| {
                self.kept_recent.iter().any(|k| is_txn(k, t))
                    && self
                        .filter
                        .txn_ref_matches(t.transactional_id.as_deref(), t.producer_id)
            }));
        if refused_kept {
            return self.pass(rec);
        }
        if let Some((_, a, b)) = rec.loc.stream {
            if !(self.filter.host_ok(a) || self.filter.host_ok(b) || self.filter.outer_ok(&rec.loc))
            {
                return Ok(());
            }
        }
        let k = match &rec.event {
            Event::Kafka(k) => k,
            // A request never answered passes where the request itself passed.
            Event::Unanswered(_, req) => {
                let passes = match &req.event {
                    Event::Kafka(r) if markers_of(r).is_some() => {
                        !self.filter.errors && self.kept_request(req).is_some()
                    }
                    Event::Kafka(r) => {
                        !self.filter.errors && self.facts_match(&[&Facts::of(&r.body)])
                    }
                    _ => false,
                };
                return if passes {
                    self.inner.record(rec)
                } else {
                    Ok(())
                };
            }
            Event::Anomaly(a) => {
                // About a request the body filters left out: out with it.
                if let (Some((set, _)), Some(f), Some(c)) =
                    (&self.left_out_requests, a.request_frame, a.correlation_id)
                {
                    if set.contains(&(f, c)) {
                        return Ok(());
                    }
                }
                // A verdict of the transaction view goes with its transaction; but a stuck
                // last stable offset is what `--errors` and `--outcome hanging` look for,
                // whatever its holder's outcome (one committed whose marker never came).
                // (Only where no other filter of the transaction's record is asked: those
                // the verdict follows its transaction for.)
                let f = &self.filter;
                let stuck = a.kind == crate::vocab::AnomalyKind::LsoStuck
                    && (f.errors || f.outcomes.iter().any(|o| o == "hanging"))
                    && f.topics.is_empty()
                    && f.hosts.is_empty()
                    && f.streams.is_empty()
                    && f.result.is_none()
                    && f.since.is_none()
                    && f.until.is_none();
                if let Some(t) = &a.transaction {
                    if !self
                        .filter
                        .txn_ref_matches(t.transactional_id.as_deref(), t.producer_id)
                    {
                        return Ok(());
                    }
                    if stuck {
                        self.stuck_kept += 1;
                        return self.pass(rec);
                    }
                    let refused = a.kind == crate::vocab::AnomalyKind::RefusedRequest;
                    // (A verdict of a later transaction of the same producer id and epoch,
                    // written before its record, is not the one left out's.)
                    let left_out = self.left_out.iter().any(|k| is_txn(k, t));
                    if !refused && left_out {
                        return Ok(());
                    }
                    if refused && self.needs_record() {
                        // Written after the transaction it was meant for, if the capture
                        // held it: with it when that was kept (above), out with it when left
                        // out, but that it is an error of its own (`--errors`, with no filter
                        // of a transaction's outcome, topics or result). Where the capture
                        // held no such transaction, judged by itself: an error (`--errors`)
                        // of its connection (`--host`, judged above) at its own time
                        // (`--since`, `--until`).
                        let f = &self.filter;
                        let alone = f.outcomes.is_empty()
                            && f.topics.is_empty()
                            && f.result.is_none()
                            && self.in_time(&rec.loc.ts);
                        let passes = if left_out {
                            alone && self.filter.errors
                        } else {
                            alone
                        };
                        if !passes {
                            return Ok(());
                        }
                        self.refused_kept += 1;
                        return self.pass(rec);
                    }
                    if self.needs_record() && !self.last_kept.is_some_and(|k| is_txn(&k, t)) {
                        // Before its record: judged when that comes.
                        if self.waiting.len() >= MAX_LEFT_OUT {
                            if let Some((old, unwritten)) = self.waiting.pop_front() {
                                self.release(&old, unwritten)?;
                            }
                        }
                        self.waiting.push_back((rec.clone(), self.unwritten));
                        return Ok(());
                    }
                }
                return self.pass(rec);
            }
        };
        match (k.message, markers_of(k)) {
            (MessageKind::Request, Some(b)) => {
                // With --errors it waits for its response (the run holds it) before anything
                // is written.
                if !self.request_matches(&b) {
                    self.left_out_request(rec);
                    return Ok(());
                }
                if self.filter.errors {
                    return Ok(());
                }
                self.pass(rec)
            }
            (MessageKind::Response, Some(b)) => {
                let kept = k.request.as_deref().and_then(|r| self.kept_request(r));
                let request = k.request.as_deref().filter(|_| kept.is_some());
                if self.filter.errors {
                    if !self.filter.failed(&b, kept.as_deref()) {
                        return Ok(());
                    }
                    if let Some(req) = request {
                        self.pass(req)?;
                    } else if self.filter.marker_filters() && !k.inferred {
                        // The request was filtered out: so is its response.
                        return Ok(());
                    }
                    return self.pass(rec);
                }
                let body_matches = self.filter.result.is_none()
                    && b.iter().any(|m| {
                        (self.filter.producer_ids.is_empty()
                            || m.producer_id.is_some_and(|p| self.filter.pid_ok(p)))
                            && (self.filter.topics.is_empty()
                                || m.topics.iter().any(|x| self.filter.topic_named(&x.0)))
                    });
                if !self.filter.marker_filters() || request.is_some() {
                    self.pass(rec)
                } else if body_matches {
                    // Its request did not pass: the response goes alone, not as an exchange.
                    let mut alone = rec.clone();
                    if let Event::Kafka(k) = &mut alone.event {
                        std::sync::Arc::make_mut(k).request = None;
                    }
                    self.pass(&alone)
                } else {
                    Ok(())
                }
            }
            // Other APIs: matched on what their bodies name.
            (_, None) => self.other_api(rec, k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::VecSink;

    /// Every body of every capture in `captures/` (each API and version the project's captures
    /// hold) names producer ids, topics and results only in the APIs the lists say: an API
    /// missing from a list would have its anomalies left out by `--anomalies relevant` under
    /// that filter while its messages could still pass.
    #[test]
    fn body_facts_lie_in_their_api_lists() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
        let config = crate::Config {
            all_apis: true,
            ..crate::Config::default()
        };
        let mut seen = [0usize; 3];
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "pcap") {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let mut sink = VecSink::default();
            let _ = crate::run_slice(&data, &config, &mut sink);
            for rec in &sink.0 {
                let Event::Kafka(k) = &rec.event else {
                    continue;
                };
                let f = Facts::of(&k.body);
                let key = k.api_key;
                let at = format!(
                    "{} frame {} ({})",
                    path.display(),
                    rec.loc.frame,
                    k.api_name
                );
                if !f.producer_ids.is_empty() {
                    seen[0] += 1;
                    assert!(PRODUCER_ID_APIS.contains(&key), "producer id in {at}");
                }
                if !f.topics.is_empty() {
                    seen[1] += 1;
                    assert!(TOPIC_APIS.contains(&key), "topic in {at}");
                }
                if f.result.is_some() {
                    seen[2] += 1;
                    assert!(RESULT_APIS.contains(&key), "result in {at}");
                }
            }
        }
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    }

    /// A time of day is the one nearest the capture's start: a capture that starts at
    /// 23:59:58 has 23:59:59 on its first day and 00:00:02 on its second (a hostile review:
    /// `--until 00:00:01` matched nothing on such a capture); 21:22 is a second before a
    /// capture that starts at 21:22:01, not the next day's.
    #[test]
    fn a_time_of_day_is_the_one_nearest_the_capture_start() {
        let start = |secs: i64| Timestamp {
            secs,
            nanos: 0,
            digits: 6,
        };
        let day = 86_400i64;
        let d0 = 20_423 * day; // 2025-12-01T00:00:00Z
        let at = |text: &str, s: i64| {
            TimeBound::parse(text)
                .unwrap()
                .nanos(Some(start(s)))
                .map(|n| (n / 1_000_000_000) as i64)
        };
        let late = d0 + day - 2; // 23:59:58
        assert_eq!(at("23:59:59", late), Some(d0 + day - 1));
        assert_eq!(at("00:00:02", late), Some(d0 + day + 2));
        let evening = d0 + 21 * 3600 + 22 * 60 + 1; // 21:22:01
        assert_eq!(at("21:22", evening), Some(evening - 1));
        assert_eq!(at("21:22:01.5", evening), Some(evening));
        assert_eq!(TimeBound::parse("08:41").unwrap().nanos(None), None);
        // Second 60 (which chrono reads as a leap second) is no time of the capture's.
        assert!(TimeBound::parse("08:41:60").is_err());
        assert!(TimeBound::parse("2026-12-01T08:41:60").is_err());
    }

    #[test]
    fn may_pass_api_takes_every_filter_given() {
        let none = Filter::default();
        assert!((0..=crate::kafka::api::MAX_API_KEY).all(|k| none.may_pass_api(k)));
        let pid = Filter {
            producer_ids: vec![7],
            ..Filter::default()
        };
        assert!(pid.may_pass_api(0) && pid.may_pass_api(26) && pid.may_pass_api(66));
        assert!(!pid.may_pass_api(3) && !pid.may_pass_api(10) && !pid.may_pass_api(18));
        let both = Filter {
            producer_ids: vec![7],
            topics: vec![TopicPattern::new("orders").unwrap()],
            ..Filter::default()
        };
        // EndTxn names a producer id but no topic; Metadata a topic but no producer id.
        assert!(both.may_pass_api(24) && !both.may_pass_api(26) && !both.may_pass_api(3));
        let result = Filter {
            result: Some(TransactionResult::Commit),
            ..Filter::default()
        };
        assert_eq!(
            (0..=crate::kafka::api::MAX_API_KEY)
                .filter(|&k| result.may_pass_api(k))
                .collect::<Vec<_>>(),
            vec![26, 27]
        );
    }
}
