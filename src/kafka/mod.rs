//! Everything Kafka: the API tables, primitives, headers, framing, request/response
//! correlation per connection, and the table of API body decoders ([`apis`]).
//!
//! Input: the in-order bytes (and gaps) of both directions of a TCP connection.
//! Output: [`event::Record`]s: one per WriteTxnMarkers request or response, and one per
//! anomaly found on the way.

pub mod api;
pub mod apis;
pub mod event;
pub mod framing;
pub mod header;
pub mod names;
pub mod partial;
pub mod primitives;
pub mod session;
pub mod tables;
pub mod trace;
pub mod tree;
pub mod walk;
