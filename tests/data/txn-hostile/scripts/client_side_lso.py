"""From a rule change (2026-12-07): on a client's host (no WriteTxnMarkers in the capture) a missing
marker says nothing, but a read_committed consumer's last stable offset still short of the batches 10 s
after the end was asked for says no marker came. tx-a (pid 4000, timeout 60 s) commits on orders 0
(leader node 1, coordinator node 0; batch at 100-102), EndTxn accepted at 2 s; a read_committed consumer
on the same host fetches orders 0 every second from 1 s on, its last stable offset at 100, the capture
ending at 39 s. mode: held (it fetches orders 0 till 39 s: HANGING, no marker came) | early (orders 0 till 8 s
only, within 10 s of the end, then another topic: not judged, markers_not_captured) | other (as held, from
another broker than the leader: not judged) | admin (as early, and at 20 s an admin client's own ABORT
WriteTxnMarkers for another producer: still no broker's markers, not judged)"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
# (other: the consumer's broker is node 2, not the leader Metadata named: another cluster's
# topic of that name, say, as on a mirroring host.)
cs_ = C(w, '10.0.0.1', 40005, '127.0.0.3' if mode == 'other' else '127.0.0.2', 9092, T)
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0, 1)])]))
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a', 60000), init_pid_resp(4000, 0))
co.x(T+3000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders', [0])]), add_parts_resp([('orders', [0])]))
ld.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3))])]), produce_resp([('orders', [(0,0,100)])]))
co.x(T+2_000_000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
last = 8 if mode in ('early', 'admin') else 39
for k in range(1, 40):
    # After `last`, the consumer reads another topic only (the capture goes on).
    topic = 'orders' if k <= last else 'audit'
    cs_.x(T + k*1_000_000 + 500, 'fetch', 4, fetch_req([(topic,[0])], 1), fetch_resp([(topic, [(0, 103, 100)])]), lat=500)
    if mode == 'admin' and k == 20:
        # An operator's kafka-transactions.sh abort of another producer's transaction, run on
        # this host while capturing: its own WriteTxnMarkers to node 1.
        ad = C(w, '10.0.0.1', 40009, '127.0.0.2', 9092, T + 20_100_000)
        ad.x(T + 20_100_000, 'wtm', 0, wtm_req([(4100, 0, False, [('orders', [1])], 0)]), wtm_resp([(4100, [('orders', [(1, 0)])])]), cid='adminclient-1')
w.close()
