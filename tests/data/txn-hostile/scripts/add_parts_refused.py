"""AddPartitionsToTxn per-partition errors. mode:
 notattempted - [orders0, orders1] answered orders0 OPERATION_NOT_ATTEMPTED(55), orders1 UNKNOWN_TOPIC_OR_PARTITION(3);
                client then adds orders0 alone (NONE), produces to it, commits; COMMIT marker for orders0 only; capture runs 60 s on
 concurrent   - [orders0] answered CONCURRENT_TRANSACTIONS(51) three times then NONE; commit"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
mk = C(w, '127.0.0.1', 40003, '127.0.0.2', 9092, T)
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0,1),(1,1)])]))
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a'), init_pid_resp(4000, 0))
def apr(res):  # res = [(part, err)]
    return i32(0) + arr([('orders', res)], lambda t: s(t[0]) + arr(t[1], lambda p: i32(p[0]) + i16(p[1])))
if mode == 'notattempted':
    co.x(T+3000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',[0,1])]), apr([(0,55),(1,3)]))
    co.x(T+3500, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',[0])]), apr([(0,0)]))
else:
    for k in range(3):
        co.x(T+3000+k*100, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',[0])]), apr([(0,51)]))
    co.x(T+3500, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',[0])]), apr([(0,0)]))
ld.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3))])]), produce_resp([('orders', [(0,0,100)])]))
co.x(T+5000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
mk.x(T+6000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]), cid='broker-0-txn-marker-sender')
co.pk(T+60_000_000, True, co.cseq, co.sseq, ACK)
w.close()
