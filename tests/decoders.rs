//! The API decoders of `kafka::apis` other than WriteTxnMarkers (which `tests/seed.rs`
//! covers), against a second implementation: the `kafka-protocol` crate encodes random values
//! at every version, our decoder must give them back; arbitrary bytes never panic; and each
//! decoder is reached through the table as the session reaches it.

mod common;

use bytes::{Bytes, BytesMut};
use common::*;
use kafka_pcap::kafka::apis::end_txn::{decode_request, decode_response};
use kafka_pcap::kafka::apis::{
    add_offsets_to_txn, add_partitions_to_txn, describe_producers, describe_transactions,
    find_coordinator, init_producer_id, list_transactions, txn_offset_commit,
};
use kafka_pcap::kafka::apis::{decoder, Body};
use kafka_pcap::kafka::primitives::{Budget, DecodeErrorKind};
use kafka_protocol::messages::{
    find_coordinator_response, AddOffsetsToTxnRequest, AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, BrokerId, DescribeProducersRequest,
    DescribeProducersResponse, DescribeTransactionsRequest, DescribeTransactionsResponse,
    EndTxnRequest, EndTxnResponse, FindCoordinatorRequest, FindCoordinatorResponse, GroupId,
    InitProducerIdRequest, InitProducerIdResponse, ListTransactionsRequest,
    ListTransactionsResponse, ProducerId, TopicName, TransactionalId, TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use proptest::prelude::*;

fn tags() -> impl Strategy<Value = Vec<(u32, Vec<u8>)>> {
    prop::collection::vec((0u32..5000, prop::collection::vec(any::<u8>(), 0..6)), 0..3)
}

fn tag_list(top: &[(u32, Vec<u8>)]) -> Vec<(u32, Vec<u8>)> {
    // kafka-protocol keeps them in a BTreeMap: in tag order, the last of a repeated tag.
    let mut want: std::collections::BTreeMap<u32, Vec<u8>> = Default::default();
    for (t, d) in top {
        want.insert(*t, d.clone());
    }
    want.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn end_txn_requests_match(v in 0i16..=5, tid in "[a-zA-Z0-9._-]{0,30}|[\\p{L}]{1,8}",
                              pid in any::<i64>(), epoch in any::<i16>(), committed in any::<bool>(),
                              top in tags()) {
        let mut msg = EndTxnRequest::default()
            .with_transactional_id(TransactionalId(StrBytes::from_string(tid.clone())))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_committed(committed);
        if v >= 3 {
            for (t, d) in &top {
                msg = msg.with_unknown_tagged_field(*t as i32, Bytes::from(d.clone()));
            }
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = decode_request(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(&got.transactional_id, &tid);
        prop_assert_eq!((got.producer_id, got.producer_epoch, got.committed), (pid, epoch, committed));
        let got_tags: Vec<(u32, Vec<u8>)> =
            got.unknown_tagged_fields.iter().map(|f| (f.tag, f.data.clone())).collect();
        prop_assert_eq!(got_tags, if v >= 3 { tag_list(&top) } else { Vec::new() });
    }

    #[test]
    fn end_txn_responses_match(v in 0i16..=5, throttle in any::<i32>(), code in -1i16..130,
                               pid in any::<i64>(), epoch in any::<i16>()) {
        let msg = EndTxnResponse::default()
            .with_throttle_time_ms(throttle)
            .with_error_code(code)
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch);
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!((got.throttle_time_ms, got.error_code), (throttle, code));
        // ProducerId and ProducerEpoch exist from v5 on (KIP-890 part 2).
        let v5 = (v >= 5).then_some((pid, epoch));
        prop_assert_eq!(got.producer_id.zip(got.producer_epoch), v5);
        prop_assert_eq!(got.error, kafka_pcap::kafka::api::ErrorCode(code).name());
    }

    #[test]
    fn init_producer_id_requests_match(v in 0i16..=5, tid in proptest::option::of("[a-zA-Z0-9._-]{0,30}"),
                                       timeout in any::<i32>(), pid in any::<i64>(), epoch in any::<i16>(),
                                       top in tags()) {
        let mut msg = InitProducerIdRequest::default()
            .with_transactional_id(tid.clone().map(|t| TransactionalId(StrBytes::from_string(t))))
            .with_transaction_timeout_ms(timeout);
        if v >= 3 {
            msg = msg.with_producer_id(ProducerId(pid)).with_producer_epoch(epoch);
        }
        if v >= 2 {
            for (t, d) in &top {
                msg = msg.with_unknown_tagged_field(*t as i32, Bytes::from(d.clone()));
            }
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = init_producer_id::decode_request(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(&got.transactional_id, &tid);
        prop_assert_eq!(got.transaction_timeout_ms, timeout);
        let v3 = (v >= 3).then_some((pid, epoch));
        prop_assert_eq!(got.producer_id.zip(got.producer_epoch), v3);
        prop_assert_eq!(got.enable_2_pc.or(got.keep_prepared_txn), None);
        let got_tags: Vec<(u32, Vec<u8>)> =
            got.unknown_tagged_fields.iter().map(|f| (f.tag, f.data.clone())).collect();
        prop_assert_eq!(got_tags, if v >= 2 { tag_list(&top) } else { Vec::new() });
    }

    #[test]
    fn init_producer_id_responses_match(v in 0i16..=6, throttle in any::<i32>(), code in -1i16..130,
                                        pid in any::<i64>(), epoch in any::<i16>(),
                                        opid in any::<i64>(), oepoch in any::<i16>()) {
        let mut msg = InitProducerIdResponse::default()
            .with_throttle_time_ms(throttle)
            .with_error_code(code)
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch);
        if v >= 6 {
            msg = msg.with_ongoing_txn_producer_id(ProducerId(opid)).with_ongoing_txn_producer_epoch(oepoch);
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = init_producer_id::decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!((got.throttle_time_ms, got.error_code, got.producer_id, got.producer_epoch),
                        (throttle, code, pid, epoch));
        let v6 = (v >= 6).then_some((opid, oepoch));
        prop_assert_eq!(got.ongoing_txn_producer_id.zip(got.ongoing_txn_producer_epoch), v6);
        prop_assert_eq!(got.error, kafka_pcap::kafka::api::ErrorCode(code).name());
    }

    #[test]
    fn add_offsets_to_txn_requests_match(v in 0i16..=4, tid in "[a-zA-Z0-9._-]{0,30}", group in "[a-zA-Z0-9._-]{0,30}",
                                         pid in any::<i64>(), epoch in any::<i16>(), top in tags()) {
        let mut msg = AddOffsetsToTxnRequest::default()
            .with_transactional_id(TransactionalId(StrBytes::from_string(tid.clone())))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_group_id(GroupId(StrBytes::from_string(group.clone())));
        if v >= 3 {
            for (t, d) in &top {
                msg = msg.with_unknown_tagged_field(*t as i32, Bytes::from(d.clone()));
            }
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = add_offsets_to_txn::decode_request(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!((&got.transactional_id, &got.group_id), (&tid, &group));
        prop_assert_eq!((got.producer_id, got.producer_epoch), (pid, epoch));
        let got_tags: Vec<(u32, Vec<u8>)> =
            got.unknown_tagged_fields.iter().map(|f| (f.tag, f.data.clone())).collect();
        prop_assert_eq!(got_tags, if v >= 3 { tag_list(&top) } else { Vec::new() });
    }

    #[test]
    fn add_offsets_to_txn_responses_match(v in 0i16..=4, throttle in any::<i32>(), code in -1i16..130) {
        let msg = AddOffsetsToTxnResponse::default()
            .with_throttle_time_ms(throttle)
            .with_error_code(code);
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = add_offsets_to_txn::decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!((got.throttle_time_ms, got.error_code), (throttle, code));
        prop_assert_eq!(got.error, kafka_pcap::kafka::api::ErrorCode(code).name());
    }

    #[test]
    fn find_coordinator_requests_match(v in 0i16..=6, key in "[a-zA-Z0-9._-]{0,30}", key_type in 0i8..3,
                                       keys in prop::collection::vec("[a-z0-9-]{0,12}", 0..4)) {
        let mut msg = FindCoordinatorRequest::default();
        if v <= 3 {
            msg = msg.with_key(StrBytes::from_string(key.clone()));
        } else {
            msg = msg.with_coordinator_keys(keys.iter().map(|k| StrBytes::from_string(k.clone())).collect());
        }
        if v >= 1 {
            msg = msg.with_key_type(key_type);
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = find_coordinator::decode_request(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(got.key, (v <= 3).then_some(key));
        prop_assert_eq!(got.key_type, (v >= 1).then_some(key_type));
        prop_assert_eq!(got.coordinator_keys, (v >= 4).then_some(keys));
    }

    #[test]
    fn find_coordinator_responses_match(v in 0i16..=6, throttle in any::<i32>(), code in -1i16..130,
                                        message in proptest::option::of("[ -~]{0,20}"),
                                        node in any::<i32>(), host in "[a-z0-9.-]{0,20}", port in any::<i32>(),
                                        n in 0usize..3) {
        let mut msg = FindCoordinatorResponse::default();
        if v >= 1 {
            msg = msg.with_throttle_time_ms(throttle);
        }
        if v <= 3 {
            msg = msg
                .with_error_code(code)
                .with_node_id(BrokerId(node))
                .with_host(StrBytes::from_string(host.clone()))
                .with_port(port);
            if v >= 1 {
                msg = msg.with_error_message(message.clone().map(StrBytes::from_string));
            }
        } else {
            let c = |k: usize| find_coordinator_response::Coordinator::default()
                .with_key(StrBytes::from_string(format!("key-{k}")))
                .with_node_id(BrokerId(node))
                .with_host(StrBytes::from_string(host.clone()))
                .with_port(port)
                .with_error_code(code)
                .with_error_message(message.clone().map(StrBytes::from_string));
            msg = msg.with_coordinators((0..n).map(c).collect());
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = find_coordinator::decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(got.throttle_time_ms, (v >= 1).then_some(throttle));
        if v <= 3 {
            prop_assert_eq!((got.error_code, got.node_id, got.port), (Some(code), Some(node), Some(port)));
            prop_assert_eq!(got.host, Some(host));
            prop_assert_eq!(got.error_message, (v >= 1).then_some(message));
            prop_assert!(got.coordinators.is_none());
        } else {
            let cs = got.coordinators.unwrap();
            prop_assert_eq!(cs.len(), n);
            for (k, c) in cs.iter().enumerate() {
                prop_assert_eq!(&c.key, &format!("key-{k}"));
                prop_assert_eq!((c.node_id, c.port, c.error_code), (node, port, code));
                prop_assert_eq!(&c.host, &host);
                prop_assert_eq!(&c.error_message, &message);
                prop_assert_eq!(c.error, kafka_pcap::kafka::api::ErrorCode(code).name());
            }
            prop_assert!(got.error_code.is_none() && got.host.is_none());
        }
    }

    #[test]
    fn add_partitions_to_txn_requests_match(v in 0i16..=5, tid in "[a-zA-Z0-9._-]{0,20}",
                                            pid in any::<i64>(), epoch in any::<i16>(), verify in any::<bool>(),
                                            topics in prop::collection::vec(("[a-z0-9-]{0,12}", prop::collection::vec(any::<i32>(), 0..4)), 0..3),
                                            ntx in 0usize..3) {
        use kafka_protocol::messages::add_partitions_to_txn_request::{AddPartitionsToTxnTopic, AddPartitionsToTxnTransaction};
        let kp_topics: Vec<AddPartitionsToTxnTopic> = topics.iter().map(|(n, ps)| {
            AddPartitionsToTxnTopic::default().with_name(TopicName(StrBytes::from_string(n.clone()))).with_partitions(ps.clone())
        }).collect();
        let mut msg = AddPartitionsToTxnRequest::default();
        if v >= 4 {
            msg = msg.with_transactions((0..ntx).map(|k| AddPartitionsToTxnTransaction::default()
                .with_transactional_id(TransactionalId(StrBytes::from_string(format!("{tid}{k}"))))
                .with_producer_id(ProducerId(pid))
                .with_producer_epoch(epoch)
                .with_verify_only(verify)
                .with_topics(kp_topics.clone())).collect());
        } else {
            msg = msg
                .with_v3_and_below_transactional_id(TransactionalId(StrBytes::from_string(tid.clone())))
                .with_v3_and_below_producer_id(ProducerId(pid))
                .with_v3_and_below_producer_epoch(epoch)
                .with_v3_and_below_topics(kp_topics);
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = add_partitions_to_txn::decode_request(&buf, v, &Budget::default()).unwrap();
        let ours = |ts: &[add_partitions_to_txn::TxnTopic]| -> Vec<(String, Vec<i32>)> {
            ts.iter().map(|t| (t.name.clone(), t.partitions.clone())).collect()
        };
        if v >= 4 {
            let txs = got.transactions.unwrap();
            prop_assert_eq!(txs.len(), ntx);
            for (k, t) in txs.iter().enumerate() {
                prop_assert_eq!(&t.transactional_id, &format!("{tid}{k}"));
                prop_assert_eq!((t.producer_id, t.producer_epoch, t.verify_only), (pid, epoch, verify));
                prop_assert_eq!(ours(&t.topics), topics.clone());
            }
            prop_assert!(got.transactional_id.is_none());
        } else {
            prop_assert_eq!(got.transactional_id, Some(tid));
            prop_assert_eq!((got.producer_id, got.producer_epoch), (Some(pid), Some(epoch)));
            prop_assert_eq!(ours(&got.topics.unwrap()), topics);
        }
    }

    #[test]
    fn add_partitions_to_txn_responses_match(v in 0i16..=5, throttle in any::<i32>(), code in -1i16..130,
                                             parts in prop::collection::vec((any::<i32>(), -1i16..130), 0..4)) {
        use kafka_protocol::messages::add_partitions_to_txn_response::{AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult};
        let topic = AddPartitionsToTxnTopicResult::default()
            .with_name(TopicName(StrBytes::from_string("t".into())))
            .with_results_by_partition(parts.iter().map(|&(p, c)| AddPartitionsToTxnPartitionResult::default()
                .with_partition_index(p).with_partition_error_code(c)).collect());
        let mut msg = AddPartitionsToTxnResponse::default().with_throttle_time_ms(throttle);
        if v >= 4 {
            msg = msg.with_error_code(code).with_results_by_transaction(vec![AddPartitionsToTxnResult::default()
                .with_transactional_id(TransactionalId(StrBytes::from_string("tx".into())))
                .with_topic_results(vec![topic])]);
        } else {
            msg = msg.with_results_by_topic_v3_and_below(vec![topic]);
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = add_partitions_to_txn::decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(got.throttle_time_ms, throttle);
        let topics = if v >= 4 {
            prop_assert_eq!(got.error_code, Some(code));
            let r = got.results_by_transaction.unwrap();
            prop_assert_eq!(&r[0].transactional_id, "tx");
            r[0].topic_results.clone()
        } else {
            prop_assert!(got.error_code.is_none());
            got.results_by_topic.unwrap()
        };
        let ps: Vec<(i32, i16)> = topics[0].results_by_partition.iter().map(|p| (p.partition_index, p.partition_error_code)).collect();
        prop_assert_eq!(ps, parts);
        prop_assert_eq!(&topics[0].name, "t");
    }

    #[test]
    fn txn_offset_commit_requests_match(v in 0i16..=5, tid in "[a-z0-9-]{0,12}", group in "[a-z0-9-]{0,12}",
                                        pid in any::<i64>(), epoch in any::<i16>(), generation in any::<i32>(),
                                        member in "[a-z0-9-]{0,12}", instance in proptest::option::of("[a-z0-9]{0,8}"),
                                        parts in prop::collection::vec((any::<i32>(), any::<i64>(), any::<i32>(), proptest::option::of("[ -~]{0,10}")), 0..4)) {
        use kafka_protocol::messages::txn_offset_commit_request::{TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic};
        let s = |x: &str| StrBytes::from_string(x.to_string());
        let topic = TxnOffsetCommitRequestTopic::default().with_name(TopicName(s("t"))).with_partitions(
            parts.iter().map(|(p, o, e, m)| {
                let mut q = TxnOffsetCommitRequestPartition::default()
                    .with_partition_index(*p).with_committed_offset(*o)
                    .with_committed_metadata(m.as_deref().map(s));
                if v >= 2 { q = q.with_committed_leader_epoch(*e); }
                q
            }).collect());
        let mut msg = TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s(&tid)))
            .with_group_id(GroupId(s(&group)))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_topics(vec![topic]);
        if v >= 3 {
            msg = msg.with_generation_id(generation).with_member_id(s(&member))
                .with_group_instance_id(instance.as_deref().map(s));
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = txn_offset_commit::decode_request(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!((&got.transactional_id, &got.group_id), (&tid, &group));
        prop_assert_eq!((got.producer_id, got.producer_epoch), (pid, epoch));
        prop_assert_eq!(got.generation_id, (v >= 3).then_some(generation));
        prop_assert_eq!(got.member_id, (v >= 3).then_some(member));
        prop_assert_eq!(got.group_instance_id, (v >= 3).then_some(instance));
        let ps: Vec<(i32, i64, Option<i32>, Option<String>)> = got.topics[0].partitions.iter()
            .map(|p| (p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata.clone())).collect();
        let want: Vec<(i32, i64, Option<i32>, Option<String>)> = parts.iter()
            .map(|(p, o, e, m)| (*p, *o, (v >= 2).then_some(*e), m.clone())).collect();
        prop_assert_eq!(ps, want);
    }

    #[test]
    fn txn_offset_commit_responses_match(v in 0i16..=5, throttle in any::<i32>(),
                                         parts in prop::collection::vec((any::<i32>(), -1i16..130), 0..4)) {
        use kafka_protocol::messages::txn_offset_commit_response::{TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic};
        let msg = TxnOffsetCommitResponse::default().with_throttle_time_ms(throttle).with_topics(vec![
            TxnOffsetCommitResponseTopic::default().with_name(TopicName(StrBytes::from_string("t".into())))
                .with_partitions(parts.iter().map(|&(p, c)| TxnOffsetCommitResponsePartition::default()
                    .with_partition_index(p).with_error_code(c)).collect())]);
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = txn_offset_commit::decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(got.throttle_time_ms, throttle);
        let ps: Vec<(i32, i16)> = got.topics[0].partitions.iter().map(|p| (p.partition_index, p.error_code)).collect();
        prop_assert_eq!(ps, parts);
    }

    #[test]
    fn describe_transactions_match(ids in prop::collection::vec("[a-z0-9-]{0,12}", 0..4), throttle in any::<i32>(),
                                   code in -1i16..130, state in "[A-Za-z]{0,14}", timeout in any::<i32>(),
                                   start in any::<i64>(), pid in any::<i64>(), epoch in any::<i16>(),
                                   parts in prop::collection::vec(any::<i32>(), 0..4)) {
        use kafka_protocol::messages::describe_transactions_response::{TopicData, TransactionState};
        let s = |x: &str| StrBytes::from_string(x.to_string());
        let q = DescribeTransactionsRequest::default()
            .with_transactional_ids(ids.iter().map(|t| TransactionalId(s(t))).collect());
        let mut buf = BytesMut::new();
        q.encode(&mut buf, 0).unwrap();
        let got = describe_transactions::decode_request(&buf, 0, &Budget::default()).unwrap();
        prop_assert_eq!(&got.transactional_ids, &ids);
        let r = DescribeTransactionsResponse::default().with_throttle_time_ms(throttle).with_transaction_states(
            ids.iter().map(|t| TransactionState::default()
                .with_error_code(code).with_transactional_id(TransactionalId(s(t)))
                .with_transaction_state(s(&state)).with_transaction_timeout_ms(timeout)
                .with_transaction_start_time_ms(start).with_producer_id(ProducerId(pid))
                .with_producer_epoch(epoch)
                .with_topics(vec![TopicData::default().with_topic(TopicName(s("t"))).with_partitions(parts.clone())]))
                .collect());
        let mut buf = BytesMut::new();
        r.encode(&mut buf, 0).unwrap();
        let got = describe_transactions::decode_response(&buf, 0, &Budget::default()).unwrap();
        prop_assert_eq!(got.throttle_time_ms, throttle);
        prop_assert_eq!(got.transaction_states.len(), ids.len());
        for (t, id) in got.transaction_states.iter().zip(&ids) {
            prop_assert_eq!((&t.transactional_id, &t.transaction_state), (id, &state));
            prop_assert_eq!((t.error_code, t.transaction_timeout_ms, t.transaction_start_time_ms), (code, timeout, start));
            prop_assert_eq!((t.producer_id, t.producer_epoch), (pid, epoch));
            prop_assert_eq!(&t.topics[0].partitions, &parts);
        }
    }

    #[test]
    fn list_transactions_match(v in 0i16..=2, states in prop::collection::vec("[A-Za-z]{0,12}", 0..3),
                               pids in prop::collection::vec(any::<i64>(), 0..3), duration in any::<i64>(),
                               pattern in proptest::option::of("[a-z.*]{0,8}"), throttle in any::<i32>(),
                               code in -1i16..130, listed in prop::collection::vec(("[a-z0-9-]{0,10}", any::<i64>()), 0..3)) {
        use kafka_protocol::messages::list_transactions_response::TransactionState;
        let s = |x: &str| StrBytes::from_string(x.to_string());
        let mut q = ListTransactionsRequest::default()
            .with_state_filters(states.iter().map(|x| s(x)).collect())
            .with_producer_id_filters(pids.iter().map(|&p| ProducerId(p)).collect());
        if v >= 1 { q = q.with_duration_filter(duration); }
        if v >= 2 { q = q.with_transactional_id_pattern(pattern.as_deref().map(s)); }
        let mut buf = BytesMut::new();
        q.encode(&mut buf, v).unwrap();
        let got = list_transactions::decode_request(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!((&got.state_filters, &got.producer_id_filters), (&states, &pids));
        prop_assert_eq!(got.duration_filter, (v >= 1).then_some(duration));
        prop_assert_eq!(got.transactional_id_pattern, (v >= 2).then_some(pattern));
        let r = ListTransactionsResponse::default().with_throttle_time_ms(throttle).with_error_code(code)
            .with_unknown_state_filters(states.iter().map(|x| s(x)).collect())
            .with_transaction_states(listed.iter().map(|(id, p)| TransactionState::default()
                .with_transactional_id(TransactionalId(s(id))).with_producer_id(ProducerId(*p))
                .with_transaction_state(s("Ongoing"))).collect());
        let mut buf = BytesMut::new();
        r.encode(&mut buf, v).unwrap();
        let got = list_transactions::decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!((got.throttle_time_ms, got.error_code), (throttle, code));
        prop_assert_eq!(&got.unknown_state_filters, &states);
        let l: Vec<(String, i64)> = got.transaction_states.iter().map(|t| (t.transactional_id.clone(), t.producer_id)).collect();
        prop_assert_eq!(l, listed);
    }

    #[test]
    fn describe_producers_match(parts in prop::collection::vec(any::<i32>(), 0..4), throttle in any::<i32>(),
                                code in -1i16..130, message in proptest::option::of("[ -~]{0,12}"),
                                prods in prop::collection::vec((any::<i64>(), any::<i32>(), any::<i32>(), any::<i64>(), any::<i32>(), any::<i64>()), 0..3)) {
        use kafka_protocol::messages::describe_producers_request::TopicRequest;
        use kafka_protocol::messages::describe_producers_response::{PartitionResponse, ProducerState, TopicResponse};
        let s = |x: &str| StrBytes::from_string(x.to_string());
        let q = DescribeProducersRequest::default().with_topics(vec![
            TopicRequest::default().with_name(TopicName(s("t"))).with_partition_indexes(parts.clone())]);
        let mut buf = BytesMut::new();
        q.encode(&mut buf, 0).unwrap();
        let got = describe_producers::decode_request(&buf, 0, &Budget::default()).unwrap();
        prop_assert_eq!(&got.topics[0].partition_indexes, &parts);
        let r = DescribeProducersResponse::default().with_throttle_time_ms(throttle).with_topics(vec![
            TopicResponse::default().with_name(TopicName(s("t"))).with_partitions(vec![
                PartitionResponse::default().with_partition_index(3).with_error_code(code)
                    .with_error_message(message.as_deref().map(s))
                    .with_active_producers(prods.iter().map(|&(p, e, q, t, c, o)| ProducerState::default()
                        .with_producer_id(ProducerId(p)).with_producer_epoch(e).with_last_sequence(q)
                        .with_last_timestamp(t).with_coordinator_epoch(c).with_current_txn_start_offset(o)).collect())])]);
        let mut buf = BytesMut::new();
        r.encode(&mut buf, 0).unwrap();
        let got = describe_producers::decode_response(&buf, 0, &Budget::default()).unwrap();
        let p = &got.topics[0].partitions[0];
        prop_assert_eq!((got.throttle_time_ms, p.partition_index, p.error_code), (throttle, 3, code));
        prop_assert_eq!(&p.error_message, &message);
        let ps: Vec<(i64, i32, i32, i64, i32, i64)> = p.active_producers.iter().map(|a| (a.producer_id, a.producer_epoch,
            a.last_sequence, a.last_timestamp, a.coordinator_epoch, a.current_txn_start_offset)).collect();
        prop_assert_eq!(ps, prods);
    }

    /// No byte string makes any decoder of the table panic, at any version it knows, through
    /// the table as the session calls it.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..80), pick in any::<u16>()) {
        for d in kafka_pcap::kafka::apis::all() {
            let span = (d.versions.end() - d.versions.start() + 1) as u16;
            let v = d.versions.start() + (pick % span) as i16;
            let _ = (d.decode_request)(&bytes, v, &Budget::default());
            let _ = (d.decode_response)(&bytes, v, &Budget::default());
        }
    }
}

/// InitProducerId by hand from the schema, with the seed's byte offsets: v1 (classic) and v6
/// (flexible; the kafka-protocol crate does not encode v6 requests).
#[test]
fn init_producer_id_by_hand() {
    // v1: transactional_id "tx" (int16 length 2, offsets 0-3), transaction_timeout_ms 60000
    // (offsets 4-7). 8 bytes.
    let v1 = [0, 2, b't', b'x', 0, 0, 0xea, 0x60];
    match (decoder(22).unwrap().decode_request)(&v1, 1, &Budget::default()) {
        Ok(Body::InitProducerIdRequest(r)) => {
            assert_eq!(r.transactional_id.as_deref(), Some("tx"));
            assert_eq!(r.transaction_timeout_ms, 60_000);
            assert_eq!((r.producer_id, r.enable_2_pc), (None, None));
        }
        other => panic!("{other:?}"),
    }
    // v1 with a null transactional id (int16 -1): an idempotent producer.
    let null = [0xff, 0xff, 0, 0, 0, 100];
    let r = init_producer_id::decode_request(&null, 1, &Budget::default()).unwrap();
    assert_eq!((r.transactional_id, r.transaction_timeout_ms), (None, 100));
    // v6: compact string "tx" (length + 1 = 3, offsets 0-2), timeout 60000 (3-6), producer_id
    // 1001 (7-14), producer_epoch 5 (15-16), enable_2_pc true (17), keep_prepared_txn false
    // (18), no tagged fields (19). 20 bytes.
    let mut v6 = vec![3, b't', b'x', 0, 0, 0xea, 0x60];
    v6.extend_from_slice(&1001i64.to_be_bytes());
    v6.extend_from_slice(&[0, 5, 1, 0, 0]);
    assert_eq!(v6.len(), 20);
    let r = init_producer_id::decode_request(&v6, 6, &Budget::default()).unwrap();
    assert_eq!(
        (
            r.producer_id,
            r.producer_epoch,
            r.enable_2_pc,
            r.keep_prepared_txn
        ),
        (Some(1001), Some(5), Some(true), Some(false))
    );
    let e = init_producer_id::decode_request(&v6[..18], 6, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TruncatedBody);
    assert_eq!(e.path(), "keep_prepared_txn");
    // v6 response: throttle 0 (0-3), error 0 (4-5), producer_id 1001 (6-13), epoch 5 (14-15),
    // ongoing producer id -1 (16-23), ongoing epoch -1 (24-25), no tags (26). 27 bytes.
    let mut resp = vec![0, 0, 0, 0, 0, 0];
    resp.extend_from_slice(&1001i64.to_be_bytes());
    resp.extend_from_slice(&[0, 5]);
    resp.extend_from_slice(&(-1i64).to_be_bytes());
    resp.extend_from_slice(&[0xff, 0xff, 0]);
    assert_eq!(resp.len(), 27);
    let r = init_producer_id::decode_response(&resp, 6, &Budget::default()).unwrap();
    assert_eq!(
        (
            r.producer_id,
            r.producer_epoch,
            r.ongoing_txn_producer_id,
            r.error
        ),
        (1001, 5, Some(-1), Some("NONE"))
    );
}

/// AddOffsetsToTxn by hand from the schema, with byte offsets: v0 (classic) and v3 (flexible).
#[test]
fn add_offsets_to_txn_by_hand() {
    // v0: transactional_id "tx" (int16 length 2, offsets 0-3), producer_id 7 (4-11),
    // producer_epoch 1 (12-13), group_id "g" (int16 length 1, 14-16). 17 bytes.
    let mut v0 = vec![0, 2, b't', b'x'];
    v0.extend_from_slice(&7i64.to_be_bytes());
    v0.extend_from_slice(&[0, 1, 0, 1, b'g']);
    assert_eq!(v0.len(), 17);
    match (decoder(25).unwrap().decode_request)(&v0, 0, &Budget::default()) {
        Ok(Body::AddOffsetsToTxnRequest(r)) => {
            assert_eq!(
                (r.transactional_id.as_str(), r.group_id.as_str()),
                ("tx", "g")
            );
            assert_eq!((r.producer_id, r.producer_epoch), (7, 1));
        }
        other => panic!("{other:?}"),
    }
    // v3: compact strings (length + 1) and tagged fields after the body: "tx" (0-2), 7 (3-10),
    // 1 (11-12), "g" (13-14), no tags (15). 16 bytes.
    let mut v3 = vec![3, b't', b'x'];
    v3.extend_from_slice(&7i64.to_be_bytes());
    v3.extend_from_slice(&[0, 1, 2, b'g', 0]);
    assert_eq!(v3.len(), 16);
    let r = add_offsets_to_txn::decode_request(&v3, 3, &Budget::default()).unwrap();
    assert_eq!((r.group_id.as_str(), r.producer_epoch), ("g", 1));
    // Cut inside group_id: its length says 1 byte, none is left.
    let e = add_offsets_to_txn::decode_request(&v3[..14], 3, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::StringLengthExceedsFrame);
    assert_eq!(e.path(), "group_id");
    // v4 response: throttle 5 (0-3), error 120 TRANSACTION_ABORTABLE (4-5), no tags (6).
    let r = add_offsets_to_txn::decode_response(&[0, 0, 0, 5, 0, 120, 0], 4, &Budget::default())
        .unwrap();
    assert_eq!(
        (r.throttle_time_ms, r.error),
        (5, Some("TRANSACTION_ABORTABLE"))
    );
}

/// FindCoordinator by hand from the schema, with byte offsets: a v0 request and response
/// (classic, a group) and a v4 request and response (flexible, keys in arrays).
#[test]
fn find_coordinator_by_hand() {
    // v0 request: key "g1" (int16 length 2, offsets 0-3). 4 bytes.
    match (decoder(10).unwrap().decode_request)(&[0, 2, b'g', b'1'], 0, &Budget::default()) {
        Ok(Body::FindCoordinatorRequest(r)) => {
            assert_eq!((r.key.as_deref(), r.key_type), (Some("g1"), None));
        }
        other => panic!("{other:?}"),
    }
    // v0 response: error 0 (0-1), node_id 2 (2-5), host "b2" (6-9), port 9092 (10-13).
    let v0 = [0, 0, 0, 0, 0, 2, 0, 2, b'b', b'2', 0, 0, 0x23, 0x84];
    let r = find_coordinator::decode_response(&v0, 0, &Budget::default()).unwrap();
    assert_eq!(
        (r.node_id, r.host.as_deref(), r.port, r.throttle_time_ms),
        (Some(2), Some("b2"), Some(9092), None)
    );
    // v4 request: key_type 1 (0), coordinator_keys: compact array of 2 (1), "tx" (2-4), "ty"
    // (5-7), no tags (8). 9 bytes.
    let q = [1, 3, 3, b't', b'x', 3, b't', b'y', 0];
    let r = find_coordinator::decode_request(&q, 4, &Budget::default()).unwrap();
    assert_eq!(r.key_type, Some(1));
    assert_eq!(
        r.coordinator_keys,
        Some(vec!["tx".to_string(), "ty".to_string()])
    );
    // v4 response: throttle 0 (0-3), coordinators: compact array of 1 (4); key "tx" (5-7),
    // node_id 2 (8-11), host "b" (12-13), port 9092 (14-17), error 0 (18-19), message null
    // (compact 0, 20), entry tags (21); body tags (22). 23 bytes.
    let p = [
        0, 0, 0, 0, 2, 3, b't', b'x', 0, 0, 0, 2, 2, b'b', 0, 0, 0x23, 0x84, 0, 0, 0, 0, 0,
    ];
    let r = find_coordinator::decode_response(&p, 4, &Budget::default()).unwrap();
    let c = &r.coordinators.as_ref().unwrap()[0];
    assert_eq!(
        (c.key.as_str(), c.node_id, c.host.as_str(), c.port),
        ("tx", 2, "b", 9092)
    );
    assert_eq!((c.error, c.error_message.as_deref()), (Some("NONE"), None));
    let e = find_coordinator::decode_response(&p[..20], 4, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TruncatedBody);
    assert_eq!(e.path(), "coordinators[0].error_message");
}

/// AddPartitionsToTxn by hand from the schema, with byte offsets: a v0 client request and a v4
/// broker request (batched, VerifyOnly).
#[test]
fn add_partitions_to_txn_by_hand() {
    // v0: transactional_id "tx" (int16 length, 0-3), producer_id 7 (4-11), producer_epoch 1
    // (12-13), topics: 1 (int32 count, 14-17), name "t" (18-20), partitions: 2 (21-24), 0
    // (25-28), 3 (29-32). 33 bytes.
    let mut v0 = vec![0, 2, b't', b'x'];
    v0.extend_from_slice(&7i64.to_be_bytes());
    v0.extend_from_slice(&[
        0, 1, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3,
    ]);
    assert_eq!(v0.len(), 33);
    match (decoder(24).unwrap().decode_request)(&v0, 0, &Budget::default()) {
        Ok(Body::AddPartitionsToTxnRequest(r)) => {
            assert_eq!(
                (r.transactional_id.as_deref(), r.producer_id),
                (Some("tx"), Some(7))
            );
            let t = &r.topics.as_ref().unwrap()[0];
            assert_eq!((t.name.as_str(), t.partitions.clone()), ("t", vec![0, 3]));
        }
        other => panic!("{other:?}"),
    }
    // v4: transactions: compact 1 (0); transactional_id "tx" (1-3), producer_id 7 (4-11),
    // epoch 1 (12-13), verify_only true (14), topics: compact 1 (15), name "t" (16-17),
    // partitions: compact 1 (18), 5 (19-22), topic tags (23), transaction tags (24); body
    // tags (25). 26 bytes.
    let mut v4 = vec![2, 3, b't', b'x'];
    v4.extend_from_slice(&7i64.to_be_bytes());
    v4.extend_from_slice(&[0, 1, 1, 2, 2, b't', 2, 0, 0, 0, 5, 0, 0, 0]);
    assert_eq!(v4.len(), 26);
    let r = add_partitions_to_txn::decode_request(&v4, 4, &Budget::default()).unwrap();
    let t = &r.transactions.as_ref().unwrap()[0];
    assert_eq!((t.transactional_id.as_str(), t.verify_only), ("tx", true));
    assert_eq!(t.topics[0].partitions, vec![5]);
    // Cut after one byte of the partition: the count of 1 no longer fits.
    let e = add_partitions_to_txn::decode_request(&v4[..20], 4, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::ArrayCountExceedsFrame);
    assert_eq!(e.path(), "transactions[0].topics[0].partitions");
}

/// TxnOffsetCommit by hand from the schema, with byte offsets: v0 (classic) and v3 (flexible,
/// with the group member fields).
#[test]
fn txn_offset_commit_by_hand() {
    // v0: transactional_id "tx" (0-3), group_id "g" (4-6), producer_id 7 (7-14), epoch 1
    // (15-16), topics: 1 (17-20), name "t" (21-23), partitions: 1 (24-27), index 0 (28-31),
    // offset 42 (32-39), metadata null (int16 -1, 40-41). 42 bytes.
    let mut v0 = vec![0, 2, b't', b'x', 0, 1, b'g'];
    v0.extend_from_slice(&7i64.to_be_bytes());
    v0.extend_from_slice(&[0, 1, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 0]);
    v0.extend_from_slice(&42i64.to_be_bytes());
    v0.extend_from_slice(&[0xff, 0xff]);
    assert_eq!(v0.len(), 42);
    match (decoder(28).unwrap().decode_request)(&v0, 0, &Budget::default()) {
        Ok(Body::TxnOffsetCommitRequest(r)) => {
            assert_eq!(
                (r.transactional_id.as_str(), r.group_id.as_str()),
                ("tx", "g")
            );
            let p = &r.topics[0].partitions[0];
            assert_eq!((p.committed_offset, p.committed_leader_epoch), (42, None));
            assert_eq!(p.committed_metadata, None);
            assert_eq!(r.generation_id, None);
        }
        other => panic!("{other:?}"),
    }
    // v3: "tx" (0-2), "g" (3-4), producer_id 7 (5-12), epoch 1 (13-14), generation 5 (15-18),
    // member_id "m" (19-20), group_instance_id null (21), topics: compact 1 (22), "t" (23-24),
    // partitions: compact 1 (25), index 0 (26-29), offset 42 (30-37), leader epoch 3 (38-41),
    // metadata "" (42), partition tags (43), topic tags (44), body tags (45). 46 bytes.
    let mut v3 = vec![3, b't', b'x', 2, b'g'];
    v3.extend_from_slice(&7i64.to_be_bytes());
    v3.extend_from_slice(&[0, 1, 0, 0, 0, 5, 2, b'm', 0, 2, 2, b't', 2, 0, 0, 0, 0]);
    v3.extend_from_slice(&42i64.to_be_bytes());
    v3.extend_from_slice(&[0, 0, 0, 3, 1, 0, 0, 0]);
    assert_eq!(v3.len(), 46);
    let r = txn_offset_commit::decode_request(&v3, 3, &Budget::default()).unwrap();
    assert_eq!(
        (
            r.generation_id,
            r.member_id.as_deref(),
            r.group_instance_id.clone()
        ),
        (Some(5), Some("m"), Some(None))
    );
    let p = &r.topics[0].partitions[0];
    assert_eq!(
        (p.committed_leader_epoch, p.committed_metadata.as_deref()),
        (Some(3), Some(""))
    );
    // v3 response: throttle 0 (0-3), topics: compact 1 (4), "t" (5-6), partitions: compact 1
    // (7), index 0 (8-11), error 90 PRODUCER_FENCED (12-13), tags (14, 15, 16). 17 bytes.
    let resp = [0, 0, 0, 0, 2, 2, b't', 2, 0, 0, 0, 0, 0, 90, 0, 0, 0];
    let r = txn_offset_commit::decode_response(&resp, 3, &Budget::default()).unwrap();
    assert_eq!(r.topics[0].partitions[0].error, Some("PRODUCER_FENCED"));
}

/// DescribeTransactions v0 (flexible) by hand from the schema, with byte offsets.
#[test]
fn describe_transactions_by_hand() {
    // Request: transactional_ids: compact 1 (0), "tx" (1-3), tags (4). 5 bytes.
    match (decoder(65).unwrap().decode_request)(&[2, 3, b't', b'x', 0], 0, &Budget::default()) {
        Ok(Body::DescribeTransactionsRequest(r)) => assert_eq!(r.transactional_ids, ["tx"]),
        other => panic!("{other:?}"),
    }
    // Response: throttle 0 (0-3), states: compact 1 (4); error 0 (5-6), "tx" (7-9), "Ongoing"
    // (10-17), timeout 60000 (18-21), start 1000 (22-29), producer_id 7 (30-37), epoch 2
    // (38-39), topics: compact 1 (40), "t" (41-42), partitions: compact 1 (43), 4 (44-47),
    // topic tags (48), state tags (49); body tags (50). 51 bytes.
    let mut r = vec![0, 0, 0, 0, 2, 0, 0, 3, b't', b'x', 8];
    r.extend_from_slice(b"Ongoing");
    r.extend_from_slice(&[0, 0, 0xea, 0x60]);
    r.extend_from_slice(&1000i64.to_be_bytes());
    r.extend_from_slice(&7i64.to_be_bytes());
    r.extend_from_slice(&[0, 2, 2, 2, b't', 2, 0, 0, 0, 4, 0, 0, 0]);
    assert_eq!(r.len(), 51);
    let got = describe_transactions::decode_response(&r, 0, &Budget::default()).unwrap();
    let t = &got.transaction_states[0];
    assert_eq!(
        (
            t.transaction_state.as_str(),
            t.producer_id,
            t.producer_epoch
        ),
        ("Ongoing", 7, 2)
    );
    assert_eq!(
        (t.topics[0].topic.as_str(), t.topics[0].partitions.clone()),
        ("t", vec![4])
    );
    let e = describe_transactions::decode_response(&r[..36], 0, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TruncatedBody);
    assert_eq!(e.path(), "transaction_states[0].producer_id");
}

/// ListTransactions by hand from the schema, with byte offsets: a v2 request with every filter.
#[test]
fn list_transactions_by_hand() {
    // state_filters: compact 1 (0), "Ongoing" (1-8); producer_id_filters: compact 1 (9), 7
    // (10-17); duration_filter 60000 (18-25); transactional_id_pattern "o.*" (26-29); tags
    // (30). 31 bytes.
    let mut q = vec![2, 8];
    q.extend_from_slice(b"Ongoing");
    q.push(2);
    q.extend_from_slice(&7i64.to_be_bytes());
    q.extend_from_slice(&60_000i64.to_be_bytes());
    q.extend_from_slice(&[4, b'o', b'.', b'*', 0]);
    assert_eq!(q.len(), 31);
    match (decoder(66).unwrap().decode_request)(&q, 2, &Budget::default()) {
        Ok(Body::ListTransactionsRequest(r)) => {
            assert_eq!(
                (r.state_filters.clone(), r.producer_id_filters.clone()),
                (vec!["Ongoing".to_string()], vec![7])
            );
            assert_eq!(r.duration_filter, Some(60_000));
            assert_eq!(r.transactional_id_pattern, Some(Some("o.*".to_string())));
        }
        other => panic!("{other:?}"),
    }
    // Read as v1, the pattern's length byte (4) is taken for a count of 4 tagged fields,
    // which the 4 bytes left cannot hold.
    let e = list_transactions::decode_request(&q, 1, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::ArrayCountExceedsFrame);
    assert_eq!(e.path(), "tagged_fields");
}

/// DescribeProducers v0 (flexible) by hand from the schema, with byte offsets.
#[test]
fn describe_producers_by_hand() {
    // Request: topics: compact 1 (0), "t" (1-2), partition_indexes: compact 1 (3), 0 (4-7),
    // topic tags (8), body tags (9). 10 bytes.
    let q = [2, 2, b't', 2, 0, 0, 0, 0, 0, 0];
    match (decoder(61).unwrap().decode_request)(&q, 0, &Budget::default()) {
        Ok(Body::DescribeProducersRequest(r)) => assert_eq!(r.topics[0].partition_indexes, [0]),
        other => panic!("{other:?}"),
    }
    // Response: throttle 0 (0-3), topics: compact 1 (4), "t" (5-6), partitions: compact 1 (7),
    // index 0 (8-11), error 0 (12-13), message null (14), producers: compact 1 (15);
    // producer_id 7 (16-23), epoch 2 (int32, 24-27), last_sequence 9 (28-31), last_timestamp
    // 1000 (32-39), coordinator_epoch 1 (40-43), current_txn_start_offset 55 (44-51), tags
    // (52); partition tags (53), topic tags (54), body tags (55). 56 bytes.
    let mut r = vec![0, 0, 0, 0, 2, 2, b't', 2, 0, 0, 0, 0, 0, 0, 0, 2];
    r.extend_from_slice(&7i64.to_be_bytes());
    r.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 9]);
    r.extend_from_slice(&1000i64.to_be_bytes());
    r.extend_from_slice(&[0, 0, 0, 1]);
    r.extend_from_slice(&55i64.to_be_bytes());
    r.extend_from_slice(&[0, 0, 0, 0]);
    assert_eq!(r.len(), 56);
    let got = describe_producers::decode_response(&r, 0, &Budget::default()).unwrap();
    let a = &got.topics[0].partitions[0].active_producers[0];
    assert_eq!(
        (a.producer_id, a.producer_epoch, a.current_txn_start_offset),
        (7, 2, 55)
    );
}

/// The smallest v3 request by hand from the schema: compact string (length + 1), int64,
/// int16, bool, empty tagged fields; and the errors of a cut and an overlong body.
#[test]
fn end_txn_by_hand() {
    let body = [2, b'x', 0, 0, 0, 0, 0, 0, 0, 9, 0, 2, 0, 0];
    match (decoder(26).unwrap().decode_request)(&body, 3, &Budget::default()) {
        Ok(Body::EndTxnRequest(r)) => {
            assert_eq!(r.transactional_id, "x");
            assert_eq!(
                (r.producer_id, r.producer_epoch, r.committed),
                (9, 2, false)
            );
        }
        other => panic!("{other:?}"),
    }
    let e = decode_request(&body[..13], 3, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TruncatedBody);
    assert_eq!(e.path(), "tagged_fields");
    let mut long = body.to_vec();
    long.push(0);
    let e = decode_request(&long, 3, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes);
    // v5 response: throttle 0, error 0, producer id 77, epoch 4, no tags.
    let r = decode_response(
        &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 77, 0, 4, 0],
        5,
        &Budget::default(),
    )
    .unwrap();
    assert_eq!((r.producer_id, r.producer_epoch), (Some(77), Some(4)));
    assert_eq!(r.error, Some("NONE"));
}

/// A capture of one connection to 9092 carrying `frames` (client, server, client, ...).
fn capture(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut c = Conversation::new(false, 9092);
    for (i, f) in frames.iter().enumerate() {
        c = if i % 2 == 0 { c.client(f) } else { c.server(f) };
    }
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, p) in c.packets().iter().enumerate() {
        w.packet(1_700_000_000, i as u32, &ethernet(&p.ip));
    }
    w.into_bytes()
}

fn framed(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

/// Under `--all-apis`, an EndTxn version the decoder does not know (6) keeps the header-only
/// record an API that is not decoded gets, paired with its response, without an anomaly; a
/// known version with a malformed body is an anomaly naming the field.
#[test]
fn end_txn_versions_the_decoder_does_not_know_are_listed_not_lost() {
    // Request header v2 (EndTxn v3+ is flexible): key 26, version 6, correlation id 1, client
    // id "c", no tags; then a body the v6 schema may define.
    let request = framed(&[0, 26, 0, 6, 0, 0, 0, 1, 0, 1, b'c', 0, 9, 9, 9]);
    let response = framed(&[0, 0, 0, 1, 0, 7, 7]);
    let config = kafka_pcap::Config {
        all_apis: true,
        ..kafka_pcap::Config::default()
    };
    let out = run_capture_with(&capture(&[request, response]), &config);
    let kinds: Vec<String> = out
        .iter()
        .map(|r| format!("{} {}", r["event_type"], r["kafka"]["message"]))
        .collect();
    assert_eq!(
        kinds,
        ["\"kafka\" \"request\"", "\"kafka\" \"response\""],
        "{out:?}"
    );
    assert_eq!(out[0]["kafka"]["api_version"], 6);
    assert!(out[0]["kafka"]["body"].is_null() && out[1]["kafka"]["body"].is_null());
    assert_eq!(out[1]["kafka"]["request_frame"], out[0]["frame"]);

    // v3 with its transactional id cut after the length: truncated_body at transactional_id.
    let bad = framed(&[0, 26, 0, 3, 0, 0, 0, 2, 0, 1, b'c', 0, 5, b'a']);
    let out = run_capture_with(&capture(&[bad]), &config);
    let a = &out[0]["anomaly"];
    assert_eq!(a["kind"], "string_length_exceeds_frame", "{out:?}");
    assert_eq!(a["field"], "transactional_id");
    assert_eq!(a["api_key"], 26);
}

/// A response that was captured but does not decode names the request it answers
/// (`request_frame`), so that a reader can tell it from a request never answered.
#[test]
fn an_undecodable_response_names_its_request() {
    let mut response = response_with_corr(1);
    // The topic name's length (COMPACT_STRING, n+1, at 19) runs past the frame.
    assert_eq!(response[19], 1);
    response[19] = 0x7f;
    let out = run_capture(&capture(&[request_with_corr(1), response]));
    let request = &out[0];
    assert_eq!(request["kafka"]["message"], "request", "{out:?}");
    let a = &out[1]["anomaly"];
    assert_eq!(a["kind"], "string_length_exceeds_frame", "{out:?}");
    assert_eq!(a["field"], "markers[0].topics[0].name");
    let message = a["message"].as_str().unwrap();
    assert!(
        message.starts_with("WriteTxnMarkers response body could not be decoded:"),
        "{message}"
    );
    assert_eq!(a["request_frame"], request["frame"]);
    assert_eq!(
        (a["api_key"].as_i64(), a["correlation_id"].as_i64()),
        (Some(27), Some(1))
    );
    assert_eq!(out.len(), 2, "{out:?}");
}

/// A body whose schema's fields all read with bytes left after them is still decoded: its
/// record holds the fields and `trailing_bytes`, and a `trailing_bytes` anomaly of the same
/// frame says how many bytes were left, where, and that the record has the fields.
#[test]
fn a_body_with_trailing_bytes_is_decoded_and_flagged() {
    let mut response = response_with_corr(1);
    response.extend_from_slice(&[0xee, 0xef]); // two bytes past the body
    let size = (response.len() - 4) as u32;
    response[..4].copy_from_slice(&size.to_be_bytes());
    let clean = run_capture(&capture(&[request_with_corr(1), response_with_corr(1)]));
    let out = run_capture(&capture(&[request_with_corr(1), response]));
    assert_eq!(out.len(), 3, "{out:?}");
    let a = &out[1]["anomaly"];
    assert_eq!(a["kind"], "trailing_bytes", "{out:?}");
    assert_eq!(
        a["message"],
        "WriteTxnMarkers response body: 2 bytes left after the last field of its version's \
         schema (frame offset 27): written for another layout, or a length before them was \
         damaged, so its fields may be misread; the frame's record holds them as the version \
         reads them (the transaction view and --stats' marker counts leave it out)"
    );
    assert_eq!(
        (a["offset"].as_u64(), a["bytes"].as_u64()),
        (Some(27), Some(29))
    );
    assert_eq!(a["request_frame"], out[0]["frame"]);
    let k = &out[2]["kafka"];
    assert_eq!(k["message"], "response");
    assert_eq!(k["trailing_bytes"], 2);
    assert_eq!(k["size"], 29);
    assert_eq!(k["request_frame"], out[0]["frame"]);
    // The body is the seed's, as without the two bytes.
    assert_eq!(k["body"], clean[1]["kafka"]["body"]);
    assert!(clean[1]["kafka"].get("trailing_bytes").is_none());
    assert_eq!(
        k["body"]["markers"][0]["topics"][0]["partitions"][0]["error"],
        "NONE"
    );
}

fn end_txn_request(version: i16, corr: i32) -> Vec<u8> {
    let body = EndTxnRequest::default()
        .with_transactional_id(TransactionalId(StrBytes::from_static_str("orders-tx")))
        .with_producer_id(ProducerId(4000))
        .with_producer_epoch(3)
        .with_committed(false);
    frames::req(
        kafka_protocol::messages::ApiKey::EndTxn,
        version,
        corr,
        "producer-1",
        &body,
    )
}

fn all_apis() -> kafka_pcap::Config {
    kafka_pcap::Config {
        all_apis: true,
        ..kafka_pcap::Config::default()
    }
}

fn kinds(out: &[serde_json::Value]) -> Vec<String> {
    out.iter()
        .map(|r| match r["event_type"].as_str() {
            Some("anomaly") => r["anomaly"]["kind"].as_str().unwrap().to_string(),
            _ => format!("{} {}", r["kafka"]["api_name"], r["kafka"]["message"]).replace('"', ""),
        })
        .collect()
}

/// A request whose header does not decode is still a request: its response pairs with it
/// (`request_not_decoded`), for WriteTxnMarkers (it was taken for a response without request
/// and inferred) and for EndTxn under `--all-apis` (found by a hostile review).
#[test]
fn a_request_with_a_broken_header_still_gets_its_response() {
    // Client id length 0x7000 in a 41-byte frame.
    let mut request = request_with_corr(1);
    request[12] = 0x70;
    let out = run_capture(&capture(&[request, response_with_corr(1)]));
    assert_eq!(
        kinds(&out),
        ["string_length_exceeds_frame", "WriteTxnMarkers response"]
    );
    let k = &out[1]["kafka"];
    assert_eq!(k["request_not_decoded"], true, "{out:?}");
    assert_eq!(k["request_frame"], out[0]["frame"]);
    assert!(k.get("inferred").is_none());

    let mut request = end_txn_request(3, 1);
    request[12] = 0x70;
    let response = framed(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    let out = run_capture_with(&capture(&[request, response]), &all_apis());
    assert_eq!(
        kinds(&out),
        ["string_length_exceeds_frame", "EndTxn response"]
    );
    assert_eq!(out[1]["kafka"]["request_not_decoded"], true, "{out:?}");
}

/// Under `--all-apis` a decoded API gets what WriteTxnMarkers gets: a frame lost in a gap is a
/// `frame_lost` (the gap alone named nothing), an unanswered request a `no_response`. Without
/// `--all-apis` EndTxn stays silent (found by a hostile review).
#[test]
fn end_txn_losses_are_reported_under_all_apis() {
    let conv = Conversation::new(false, 9092)
        .mss(20)
        .client(&end_txn_request(0, 1))
        .server(&framed(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0]))
        .client(&end_txn_request(0, 2));
    let mut packets = conv.packets();
    // The second segment of the first request (its transactional id) was never captured.
    let lost = packets
        .iter()
        .position(|p| p.dir == Dir::ToServer && !p.payload.is_empty())
        .unwrap()
        + 1;
    packets.remove(lost);
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, p) in packets.iter().enumerate() {
        w.packet(1_700_000_000, i as u32, &ethernet(&p.ip));
    }
    let pcap = w.into_bytes();
    let out = run_capture_with(&pcap, &all_apis());
    assert_eq!(
        kinds(&out),
        [
            "gap",
            "EndTxn request",
            "frame_lost",
            "EndTxn response",
            "EndTxn request",
            "no_response"
        ],
        "{out:?}"
    );
    // The first request is decoded as far as it was captured (its header up to the client
    // id), at its frame's last packet, and its response pairs with it.
    let first = &out[1]["kafka"];
    assert_eq!(first["truncated"], true);
    assert_eq!(first["truncated_field"], "client_id");
    assert_eq!(first["captured_bytes"], 16);
    assert_eq!(out[1]["frame"], out[2]["frame"]);
    assert_eq!(out[3]["kafka"]["request_frame"], out[1]["frame"]);
    assert!(out[3]["kafka"].get("request_not_decoded").is_none());
    assert_eq!(out[5]["anomaly"]["request_frame"], out[4]["frame"]);
    // By default: only the gap, which says nothing of interest was lost.
    let out = run_capture(&pcap);
    assert_eq!(kinds(&out), ["gap"], "{out:?}");
}

/// The correlator: with `hold_requests`, a response record carries the record of the request
/// the session paired it with (even when correlation ids repeat), and a request without a
/// response record comes back once as `Event::Unanswered`, numbered in the order the requests
/// were written; without it, nothing is held.
#[test]
fn the_correlator_hands_each_exchange_over_once() {
    use kafka_pcap::kafka::event::{Event, MessageKind};
    use kafka_pcap::output::VecSink;
    // Request 1, request 1 again (a client reusing an id), one response 1, request 2 never
    // answered.
    let pcap = capture(&[
        request_with_corr(1),
        Vec::new(),
        request_with_corr(1),
        response_with_corr(1),
        request_with_corr(2),
    ]);
    let config = kafka_pcap::Config {
        hold_requests: true,
        ..kafka_pcap::Config::default()
    };
    let mut sink = VecSink::default();
    kafka_pcap::run(&pcap[..], &config, &mut sink).unwrap();
    let mut requests = Vec::new();
    let mut paired = Vec::new();
    let mut unanswered = Vec::new();
    for r in &sink.0 {
        match &r.event {
            Event::Kafka(k) if k.message == MessageKind::Request => requests.push(r.loc.frame),
            Event::Kafka(k) => {
                let req = k
                    .request
                    .as_ref()
                    .expect("a paired response carries its request");
                paired.push((req.loc.frame, k.request_frame));
            }
            Event::Unanswered(seq, req) => unanswered.push((*seq, req.loc.frame)),
            Event::Anomaly(_) => {}
        }
    }
    assert_eq!(requests.len(), 3, "{:?}", sink.0);
    // The response answers the first request with id 1 (Kafka answers in order).
    assert_eq!(paired, [(requests[0], Some(requests[0]))]);
    unanswered.sort();
    assert_eq!(
        unanswered.iter().map(|u| u.1).collect::<Vec<_>>(),
        [requests[1], requests[2]]
    );
    assert!(unanswered[0].0 < unanswered[1].0);

    let mut sink = VecSink::default();
    kafka_pcap::run(&pcap[..], &kafka_pcap::Config::default(), &mut sink).unwrap();
    assert!(sink.0.iter().all(|r| match &r.event {
        Event::Kafka(k) => k.request.is_none(),
        Event::Unanswered(..) => false,
        Event::Anomaly(_) => true,
    }));
}

mod metadata_against_kafka_protocol {
    use super::*;
    use kafka_pcap::kafka::apis::metadata;
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
    use kafka_protocol::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    use kafka_protocol::messages::{MetadataRequest, MetadataResponse};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn metadata_requests_match(v in 0i16..=13, names in proptest::option::of(prop::collection::vec("[a-z0-9._-]{1,12}", 0..3)),
                                   auto in any::<bool>(), ops in any::<bool>()) {
            // v0 has no null topic list (empty means all).
            let names = if v == 0 { Some(names.unwrap_or_default()) } else { names };
            let topics = names.clone().map(|ns| ns.iter().map(|n| {
                let mut t = MetadataRequestTopic::default().with_name(Some(TopicName(StrBytes::from_string(n.clone()))));
                if v >= 10 {
                    t = t.with_topic_id(uuid::Uuid::from_bytes([3; 16]));
                }
                t
            }).collect());
            let mut msg = MetadataRequest::default().with_topics(topics);
            if v >= 4 {
                msg = msg.with_allow_auto_topic_creation(auto);
            }
            if (8..=10).contains(&v) {
                msg = msg.with_include_cluster_authorized_operations(ops);
            }
            if v >= 8 {
                msg = msg.with_include_topic_authorized_operations(!ops);
            }
            let mut buf = BytesMut::new();
            msg.encode(&mut buf, v).unwrap();
            let got = metadata::decode_request(&buf, v, &Budget::default()).unwrap();
            let got_names = got.topics.as_ref().map(|ts| ts.iter().map(|t| t.name.clone().unwrap()).collect::<Vec<_>>());
            prop_assert_eq!(got_names, names);
            if let Some(ts) = &got.topics {
                for t in ts {
                    prop_assert_eq!(t.topic_id.is_some(), v >= 10);
                }
            }
            prop_assert_eq!(got.allow_auto_topic_creation, (v >= 4).then_some(auto));
            prop_assert_eq!(got.include_cluster_authorized_operations, (8..=10).contains(&v).then_some(ops));
            prop_assert_eq!(got.include_topic_authorized_operations, (v >= 8).then_some(!ops));
        }

        #[test]
        fn metadata_responses_match(v in 0i16..=13, brokers in prop::collection::vec((any::<i32>(), "[a-z0-9.-]{1,15}", 1i32..65536, proptest::option::of("[a-z0-9-]{1,6}")), 0..4),
                                    topics in prop::collection::vec(("[a-z0-9._-]{1,12}", -1i16..120, any::<bool>(),
                                        prop::collection::vec((any::<i32>(), any::<i32>(), prop::collection::vec(any::<i32>(), 0..4)), 0..3)), 0..3),
                                    controller in any::<i32>(), code in -1i16..120) {
            let msg = MetadataResponse::default()
                .with_throttle_time_ms(if v >= 3 { 7 } else { 0 })
                .with_brokers(brokers.iter().map(|(id, host, port, rack)| MetadataResponseBroker::default()
                    .with_node_id(BrokerId(*id)).with_host(StrBytes::from_string(host.clone())).with_port(*port)
                    .with_rack(if v >= 1 { rack.clone().map(StrBytes::from_string) } else { None })).collect())
                .with_cluster_id(if v >= 2 { Some(StrBytes::from_static_str("cluster-x")) } else { None })
                .with_controller_id(BrokerId(if v >= 1 { controller } else { -1 }))
                .with_topics(topics.iter().map(|(name, err, internal, parts)| {
                    let mut t = MetadataResponseTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_string(name.clone()))))
                        .with_error_code(*err)
                        .with_is_internal(v >= 1 && *internal)
                        .with_partitions(parts.iter().map(|(i, leader, replicas)| {
                            let mut p = MetadataResponsePartition::default().with_partition_index(*i)
                                .with_leader_id(BrokerId(*leader))
                                .with_replica_nodes(replicas.iter().map(|r| BrokerId(*r)).collect())
                                .with_isr_nodes(replicas.iter().take(1).map(|r| BrokerId(*r)).collect());
                            if v >= 7 {
                                p = p.with_leader_epoch(5);
                            }
                            p
                        }).collect());
                    if v >= 10 {
                        t = t.with_topic_id(uuid::Uuid::from_bytes([8; 16]));
                    }
                    if v >= 8 {
                        t = t.with_topic_authorized_operations(0x0f);
                    }
                    t
                }).collect())
                .with_error_code(if v >= 13 { code } else { 0 });
            let mut buf = BytesMut::new();
            msg.encode(&mut buf, v).unwrap();
            let got = metadata::decode_response(&buf, v, &Budget::default()).unwrap();
            prop_assert_eq!(got.throttle_time_ms, (v >= 3).then_some(7));
            prop_assert_eq!(got.brokers.len(), brokers.len());
            for (g, (id, host, port, rack)) in got.brokers.iter().zip(&brokers) {
                prop_assert_eq!((g.node_id, &g.host, g.port), (*id, host, *port));
                prop_assert_eq!(g.rack.clone(), (v >= 1).then(|| rack.clone()));
            }
            prop_assert_eq!(got.cluster_id.clone(), (v >= 2).then(|| Some("cluster-x".to_string())));
            prop_assert_eq!(got.controller_id, (v >= 1).then_some(controller));
            prop_assert_eq!(got.error_code, (v >= 13).then_some(code));
            for (g, (name, err, internal, parts)) in got.topics.iter().zip(&topics) {
                prop_assert_eq!(g.name.as_deref(), Some(name.as_str()));
                prop_assert_eq!(g.error_code, *err);
                prop_assert_eq!(g.is_internal, (v >= 1).then_some(*internal));
                prop_assert_eq!(g.topic_id.is_some(), v >= 10);
                prop_assert_eq!(g.topic_authorized_operations, (v >= 8).then_some(0x0f));
                for (gp, (i, leader, replicas)) in g.partitions.iter().zip(parts) {
                    prop_assert_eq!((gp.partition_index, gp.leader_id), (*i, *leader));
                    prop_assert_eq!(&gp.replica_nodes, replicas);
                    prop_assert_eq!(gp.leader_epoch, (v >= 7).then_some(5));
                    prop_assert_eq!(gp.offline_replicas.clone(), (v >= 5).then(Vec::new));
                }
            }
        }
    }

    /// Metadata v1 (classic) and v13 (flexible) responses by hand from the schema, with byte
    /// offsets: one broker, one topic with one partition.
    #[test]
    fn metadata_by_hand() {
        let mut b = Vec::new();
        b.extend(1i32.to_be_bytes()); // 0: brokers: 1
        b.extend(2i32.to_be_bytes()); // 4: node_id 2
        b.extend(9i16.to_be_bytes()); // 8: host "127.0.0.1"
        b.extend(b"127.0.0.1");
        b.extend(9094i32.to_be_bytes()); // 19: port
        b.extend((-1i16).to_be_bytes()); // 23: rack null
        b.extend(1i32.to_be_bytes()); // 25: controller_id 1
        b.extend(1i32.to_be_bytes()); // 29: topics: 1
        b.extend(0i16.to_be_bytes()); // 33: error_code
        b.extend(5i16.to_be_bytes()); // 35: name "txn-a"
        b.extend(b"txn-a");
        b.push(0); // 42: is_internal false
        b.extend(1i32.to_be_bytes()); // 43: partitions: 1
        b.extend(0i16.to_be_bytes()); // 47: error_code
        b.extend(3i32.to_be_bytes()); // 49: partition_index 3
        b.extend(2i32.to_be_bytes()); // 53: leader_id 2
        b.extend(1i32.to_be_bytes()); // 57: replica_nodes [2]
        b.extend(2i32.to_be_bytes());
        b.extend(1i32.to_be_bytes()); // 65: isr_nodes [2]
        b.extend(2i32.to_be_bytes());
        let got = metadata::decode_response(&b, 1, &Budget::default()).unwrap();
        assert_eq!(got.brokers[0].host, "127.0.0.1");
        assert_eq!((got.brokers[0].node_id, got.brokers[0].port), (2, 9094));
        assert_eq!(got.brokers[0].rack, Some(None));
        let t = &got.topics[0];
        assert_eq!(
            (t.name.as_deref(), t.partitions[0].leader_id),
            (Some("txn-a"), 2)
        );
        let mut short = b.clone();
        short.truncate(60);
        let e = metadata::decode_response(&short, 1, &Budget::default()).unwrap_err();
        assert_eq!(e.path(), "topics[0].partitions[0].replica_nodes");
        assert_eq!(e.offset_in(short.len()), 57);
        // v13: compact, topic ids, a top-level error code.
        let mut f = Vec::new();
        f.extend(0i32.to_be_bytes()); // 0: throttle_time_ms
        f.push(2); // 4: brokers: 1
        f.extend(1i32.to_be_bytes()); // 5: node_id 1
        f.push(10); // 9: host
        f.extend(b"127.0.0.1");
        f.extend(9092i32.to_be_bytes()); // 19: port
        f.push(0); // 23: rack null
        f.push(0); // 24: broker tags
        f.push(0); // 25: cluster_id null
        f.extend(1i32.to_be_bytes()); // 26: controller_id
        f.push(2); // 30: topics: 1
        f.extend(0i16.to_be_bytes()); // 31: error_code
        f.push(6); // 33: name "txn-b"
        f.extend(b"txn-b");
        f.extend([0x11; 16]); // 39: topic_id
        f.push(1); // 55: is_internal true
        f.push(1); // 56: partitions: 0
        f.extend((-2147483648i32).to_be_bytes()); // 57: topic_authorized_operations
        f.push(0); // 61: topic tags
        f.extend(0i16.to_be_bytes()); // 62: error_code
        f.push(0); // 64: tags
        let got = metadata::decode_response(&f, 13, &Budget::default()).unwrap();
        assert_eq!(got.brokers[0].rack, Some(None));
        assert_eq!(got.cluster_id, Some(None));
        assert_eq!(
            got.topics[0].topic_id.as_deref(),
            Some("EREREREREREREREREREREQ")
        );
        assert_eq!(
            (got.topics[0].is_internal, got.error),
            (Some(true), Some(Some("NONE")))
        );
    }
}

/// A walked frame (Produce) whose request header is malformed gets the same anomaly, at the
/// same frame offset, whatever the TCP segments (a hostile review found the offset followed
/// the bytes gathered so far); a body error names its field; the next request still decodes.
#[test]
fn walked_frames_report_the_same_whatever_the_segments() {
    // Produce v9 header: key 0, version 9, correlation id 1, client id length 0xfffe (-2).
    let mut bad = vec![0, 0, 0, 9, 0, 0, 0, 1, 0xff, 0xfe, 0];
    bad.extend([0u8; 40]);
    // Produce v9 with a records length past the frame (compact 0x7f: 126 bytes).
    let mut long = vec![0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0];
    long.extend([0, 0xff, 0xff, 0, 0, 0x75, 0x30, 2, 2, b't', 2]);
    long.extend(0i32.to_be_bytes());
    long.push(0x7f);
    long.extend([0u8; 8]);
    for mss in [1, 7, 1460] {
        let mut c = Conversation::new(false, 9092).mss(mss);
        c = c.client(&framed(&bad)).client(&framed(&long));
        c = c
            .client(&end_txn_request(0, 3))
            .server(&framed(&[0, 0, 0, 3, 0, 0, 0, 0, 0, 0]));
        let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
        for (i, p) in c.packets().iter().enumerate() {
            w.packet(1_700_000_000, i as u32, &ethernet(&p.ip));
        }
        let out = run_capture_with(&w.into_bytes(), &all_apis());
        let anomalies: Vec<(String, u64, String)> = out
            .iter()
            // (Both Produce requests are then passed over by the EndTxn response: no_response.)
            .filter(|r| r["event_type"] == "anomaly" && r["anomaly"]["kind"] != "no_response")
            .map(|r| {
                let a = &r["anomaly"];
                (
                    a["kind"].as_str().unwrap().to_string(),
                    a["offset"].as_u64().unwrap(),
                    a["field"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        assert_eq!(
            anomalies,
            [
                ("negative_length".to_string(), 8, "client_id".to_string()),
                (
                    "string_length_exceeds_frame".to_string(),
                    26,
                    "topic_data[0].partition_data[0].records".to_string()
                ),
            ],
            "mss {mss}"
        );
        let end_txn: Vec<&serde_json::Value> =
            out.iter().filter(|r| r["kafka"]["api_key"] == 26).collect();
        assert_eq!(
            end_txn.len(),
            2,
            "mss {mss}: the EndTxn exchange after them"
        );
    }
}

/// A 12 MiB Produce request under a memory limit of 1 MiB: walked, not kept (a kept frame may
/// reserve at most half the budget), so it decodes whole, its one batch header read and the
/// 12 MiB of records skipped, with no memory_limit anomaly.
#[test]
fn a_produce_frame_larger_than_the_budget_is_walked() {
    let n = 12 << 20;
    let mut batch = Vec::new();
    batch.extend(0i64.to_be_bytes()); // base_offset
    batch.extend(((n - 12) as i32).to_be_bytes()); // batch_length
    batch.extend(0i32.to_be_bytes()); // partition_leader_epoch
    batch.push(2); // magic
    batch.extend(0u32.to_be_bytes()); // crc
    batch.extend(0x10i16.to_be_bytes()); // transactional
    batch.extend(0i32.to_be_bytes()); // last_offset_delta
    batch.extend(1i64.to_be_bytes());
    batch.extend(1i64.to_be_bytes());
    batch.extend(4242i64.to_be_bytes()); // producer_id
    batch.extend(3i16.to_be_bytes()); // producer_epoch
    batch.extend(0i32.to_be_bytes()); // base_sequence
    batch.extend(1i32.to_be_bytes()); // records_count
    batch.resize(n, 0x5a);
    // Produce v3 (classic): header v1, client id "p".
    let mut body = vec![0, 0, 0, 3, 0, 0, 0, 1, 0, 1, b'p'];
    body.extend((-1i16).to_be_bytes()); // transactional_id null
    body.extend((-1i16).to_be_bytes()); // acks
    body.extend(1000i32.to_be_bytes());
    body.extend(1i32.to_be_bytes()); // topics: 1
    body.extend(1i16.to_be_bytes());
    body.push(b't');
    body.extend(1i32.to_be_bytes()); // partitions: 1
    body.extend(0i32.to_be_bytes()); // index
    body.extend((n as i32).to_be_bytes()); // records length
    body.extend(&batch);
    let c = Conversation::new(false, 9092)
        .mss(65_000)
        .client(&framed(&body));
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, p) in c.packets().iter().enumerate() {
        w.packet(1_700_000_000, i as u32, &ethernet(&p.ip));
    }
    let config = kafka_pcap::Config {
        all_apis: true,
        memory: kafka_pcap::memory::Memory::new(1 << 20),
        ..Default::default()
    };
    let out = run_capture_with(&w.into_bytes(), &config);
    let kinds = kinds(&out);
    assert!(!kinds.iter().any(|k| k == "memory_limit"), "{kinds:?}");
    let produce: Vec<&serde_json::Value> =
        out.iter().filter(|r| r["kafka"]["api_key"] == 0).collect();
    assert_eq!(produce.len(), 1, "{kinds:?}");
    let b = &produce[0]["kafka"]["body"]["topic_data"][0]["partition_data"][0]["records"];
    assert_eq!(b["size"], n);
    assert_eq!(b["batches"][0]["producer_id"], 4242);
    assert_eq!(b["batches"][0]["batch_length"], n - 12);
}

/// A Produce request (walked as it streams by, not kept whole) with bytes after its schema's
/// last field: its record holds the body and `trailing_bytes`, the anomaly says so, and its
/// response pairs with it as with any decoded request.
#[test]
fn a_walked_body_with_trailing_bytes_is_decoded_and_flagged() {
    use kafka_protocol::messages::{ApiKey, ProduceRequest, ProduceResponse};
    let body = ProduceRequest::default()
        .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("tx-9"))))
        .with_acks(-1)
        .with_timeout_ms(30_000);
    let request = frames::req(ApiKey::Produce, 9, 5, "producer-9", &body);
    let response = frames::resp(ApiKey::Produce, 9, 5, &ProduceResponse::default());
    let mut long = request.clone();
    long.extend_from_slice(&[0xab, 0xcd, 0xef]);
    let size = (long.len() - 4) as u32;
    long[..4].copy_from_slice(&size.to_be_bytes());
    let clean = run_capture_with(&capture(&[request.clone(), response.clone()]), &all_apis());
    let out = run_capture_with(&capture(&[long, response]), &all_apis());
    assert_eq!(out.len(), 3, "{out:#?}");
    let a = &out[0]["anomaly"];
    assert_eq!(a["kind"], "trailing_bytes");
    let at = request.len() - 4;
    assert_eq!(
        a["message"],
        format!(
            "Produce request body: 3 bytes left after the last field of its version's schema \
             (frame offset {at}): written for another layout, or a length before them was \
             damaged, so its fields may be misread; the frame's record holds them as the \
             version reads them (the transaction view and --stats' marker counts leave it out)"
        )
    );
    assert_eq!(
        (a["offset"].as_u64(), a["bytes"].as_u64()),
        (Some(at as u64), Some(size as u64))
    );
    let k = &out[1]["kafka"];
    assert_eq!(
        (&k["api_name"], &k["trailing_bytes"]),
        (&"Produce".into(), &3.into())
    );
    assert_eq!(k["body"], clean[0]["kafka"]["body"]);
    assert_eq!(k["body"]["transactional_id"], "tx-9");
    let r = &out[2]["kafka"];
    assert_eq!(r["request_frame"], out[1]["frame"]);
    assert!(r.get("request_not_decoded").is_none(), "{r}");
}
