"""A capture of an application host: a producer's transaction committed (EndTxn accepted, no marker on the
capture's wire: inter-broker traffic not visible) and a read_committed consumer on the same host whose Fetch
responses show orders-0's and orders-1's last stable offsets past the transaction's records (103 > 102, 203 > 201):
its markers were written. Capture runs 90 s. mode: lso_past | lso_stuck (LSO stays at 100/200: truly stuck) |
no_end (no EndTxn: the last stable offsets pass the transaction's first batches all the same, as when its coordinator
aborted it past its timeout)"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
cs_ = C(w, '10.0.0.1', 40005, '127.0.0.2', 9092, T)
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0,1),(1,1)])]))
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a'), init_pid_resp(4000, 0))
co.x(T+3000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',[0,1])]), add_parts_resp([('orders',[0,1])]))
ld.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3)), (1, batch_seq(4000,0,2))])]), produce_resp([('orders', [(0,0,100),(1,0,200)])]))
if mode != 'no_end':
    co.x(T+5000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
for k in range(90):
    h0, h1 = 104 + k, 203 + k          # other producers keep writing: the high watermarks move
    l0, l1 = (100, 200) if mode == 'lso_stuck' else (h0, h1)
    cs_.x(T+6000 + k*1_000_000, 'fetch', 4, fetch_req([('orders',[0,1])], 1), fetch_resp([('orders', [(0, h0, l0), (1, h1, l1)])]), lat=500)
w.close()
