//! Kafka frames encoded by the `kafka-protocol` crate (an implementation other than
//! kafka-pcap's): a request or response header of the version the API's version uses, the body,
//! and the int32 size prefix. Shared by the tests and the capture generators in `examples/`.

use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Encodable, StrBytes};

/// The bytes `f` writes, behind their int32 size prefix.
pub fn framed(f: impl FnOnce(&mut BytesMut)) -> Vec<u8> {
    let mut b = BytesMut::new();
    b.put_i32(0);
    f(&mut b);
    let size = (b.len() - 4) as i32;
    b[..4].copy_from_slice(&size.to_be_bytes());
    b.to_vec()
}

/// A whole request frame of API `key` at `version`, correlation id `corr`, client id `client`.
pub fn req<T: Encodable>(key: ApiKey, version: i16, corr: i32, client: &str, body: &T) -> Vec<u8> {
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(corr)
        .with_client_id(Some(StrBytes::from_string(client.to_string())));
    framed(|b| {
        header
            .encode(b, key.request_header_version(version))
            .expect("header");
        body.encode(b, version).expect("body");
    })
}

/// A whole response frame of API `key` at `version` (its request's), correlation id `corr`.
pub fn resp<T: Encodable>(key: ApiKey, version: i16, corr: i32, body: &T) -> Vec<u8> {
    let header = ResponseHeader::default().with_correlation_id(corr);
    framed(|b| {
        header
            .encode(b, key.response_header_version(version))
            .expect("header");
        body.encode(b, version).expect("body");
    })
}
