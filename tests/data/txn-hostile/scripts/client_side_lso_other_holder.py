# Client host, no WriteTxnMarkers. Two producers write orders 0 (leader node 1, coordinator node 0).
# mode slow: tx-slow (pid 5000, timeout 900 s, a long transaction, legitimately open) writes offset 90 at 0.5 s
#   and stays open to the capture's end.
# mode before: the offset is held at 50 by a transaction begun before the capture (no tx-slow).
# tx-a (pid 4000, timeout 60 s) writes 100-102 at 1 s and commits, EndTxn accepted at 2 s: its marker
# was written fine; a read_committed consumer fetches orders 0 every second to 39 s, last_stable_offset
# stays at tx-slow's first offset (90) or 50: Kafka's LSO is the first offset of the EARLIEST open
# transaction, whatever the later ones did.
import sys
sys.path.insert(0, __import__('os').path.dirname(__file__))
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
cs_ = C(w, '10.0.0.1', 40005, '127.0.0.2', 9092, T)
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0, 1)])]))
lso = 50
if mode == 'slow':
    lso = 90
    co2 = C(w, '10.0.0.1', 40003, '127.0.0.1', 9092, T)
    ld2 = C(w, '10.0.0.1', 40004, '127.0.0.2', 9092, T)
    co2.x(T+1500, 'init_pid', 1, init_pid_req('tx-slow', 900000), init_pid_resp(5000, 0), cid='slow')
    co2.x(T+300_000, 'add_parts', 1, add_parts_req('tx-slow', 5000, 0, [('orders', [0])]), add_parts_resp([('orders', [0])]), cid='slow')
    ld2.x(T+500_000, 'produce', 3, produce_req('tx-slow', [('orders', [(0, batch_seq(5000,0,1))])]), produce_resp([('orders', [(0,0,90)])]), cid='slow')
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a', 60000), init_pid_resp(4000, 0))
co.x(T+900_000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders', [0])]), add_parts_resp([('orders', [0])]))
ld.x(T+1_000_000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3))])]), produce_resp([('orders', [(0,0,100)])]))
co.x(T+2_000_000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
for k in range(1, 40):
    hw = 91 if k < 1 else 104
    cs_.x(T + k*1_000_000 + 500, 'fetch', 4, fetch_req([('orders',[0])], 1), fetch_resp([('orders', [(0, hw, lso)])]), cid='consumer', lat=500)
w.close()
