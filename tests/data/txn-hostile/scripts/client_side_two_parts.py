# Client host, no WriteTxnMarkers: tx-a commits over orders 0 (leader 1) and orders 1 (leader 2),
# EndTxn accepted at 2 s; a read_committed consumer reads orders 0 only, its LSO held at 100 to 39 s.
import sys
sys.path.insert(0, __import__('os').path.dirname(__file__))
from kh import *
w = W(sys.argv[1]); T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
l1 = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
l2 = C(w, '10.0.0.1', 40003, '127.0.0.3', 9092, T)
cs_ = C(w, '10.0.0.1', 40005, '127.0.0.2', 9092, T)
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0, 1), (1, 2)])]))
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a', 60000), init_pid_resp(4000, 0))
co.x(T+3000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders', [0, 1])]), add_parts_resp([('orders', [0, 1])]))
l1.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3))])]), produce_resp([('orders', [(0,0,100)])]))
l2.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(1, batch_seq(4000,0,3))])]), produce_resp([('orders', [(1,0,200)])]))
co.x(T+2_000_000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
for k in range(1, 40):
    cs_.x(T + k*1_000_000 + 500, 'fetch', 4, fetch_req([('orders',[0])], 1), fetch_resp([('orders', [(0, 103, 100)])]), cid='consumer', lat=500)
w.close()
