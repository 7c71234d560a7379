# Two transactional producers. A (pid 4000, epoch 2; its InitProducerId, with
# transaction.timeout.ms 900000, was before the capture) holds a transaction open 30 s on
# orders 0 (first offset 100), then commits (EndTxn accepted, COMMIT marker written).
# B (a Kafka Streams app, transaction.timeout.ms 10000) starts in the capture
# (InitProducerId with timeout 10000). A read_committed consumer fetches orders 0 every
# second: last_stable_offset 100 while high_watermark grows, until A's commit moves it.
# Nothing was stuck: A's transaction was well within its own timeout and was committed.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
p = Pcap(sys.argv[1])
a = Client(p, 40001, 9092, T, 'flink-sink')
a.x(T+1000, 'add_parts', 1, add_parts_req('tx-a', 4000, 2, [('orders',[0])]), add_parts_resp([('orders',[0])]))
la = Client(p, 40002, 9092, T, 'flink-sink', sip='127.0.0.2')
la.x(T+2000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000, 2, 3, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
bq = Client(p, 40003, 9092, T, 'streams-app', cip='10.0.0.2')
bq.x(T+3000, 'init_pid', 1, init_pid_req('tx-b', 10000), init_pid_resp(5000, 0))
k = Client(p, 40005, 9092, T, 'consumer', cip='10.0.0.7', sip='127.0.0.2')
for s in range(1, 30):
    k.x(T + s*1_000_000, 'fetch', 4, fetch_req([('orders',[0])]), fetch_resp([('orders',[(0, 103 + s, 100)])]))
a.x(T+30_000_000, 'end_txn', 1, end_txn_req('tx-a', 4000, 2, True), end_txn_resp(0))
b = Client(p, 40009, 9092, T+30_001_000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+30_001_000, 'wtm', 0, wtm_req([(4000, 2, True, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
k.x(T + 31_000_000, 'fetch', 4, fetch_req([('orders',[0])]), fetch_resp([('orders',[(0, 140, 140)])]))
p.close()
