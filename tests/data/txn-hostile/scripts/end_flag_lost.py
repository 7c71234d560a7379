"""EndTxn(commit) request whose last byte (the `committed` flag) the capture lost (1-byte gap); the
coordinator answers NONE. Then the producer's next transaction (same epoch, tv1) on the same
connection: AddPartitionsToTxn + Produce, left open; the capture ends 2 s later.
mode: wire (orders led by node 1: COMMIT markers on the wire) | local (led by the coordinator: no markers)
| client (led by node 1, capture of the client host: no markers; the next transaction committed, capture ends 90 s on)"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; clean = len(sys.argv) > 3 and sys.argv[3] == 'clean'  # clean: nothing lost, for comparison
T = T0; L = 0 if mode == 'local' else 1
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0,L),(1,L)])]))
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a'), init_pid_resp(4000, 0))
co.x(T+3000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',[0,1])]), add_parts_resp([('orders',[0,1])]))
ld.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3)), (1, batch_seq(4000,0,2))])]), produce_resp([('orders', [(0,0,100),(1,0,200)])]))
c, q = co.req('end_txn', 1, end_txn_req('tx-a', 4000, 0, True))
if clean: co.send(T+5000, q)
else: co.send(T+5000, q[:-1]); co.cseq += 1          # the last byte (committed=true) not captured
co.send(T+5100, resp_frame(c, end_txn_resp(0)), False)
if mode == 'wire':
    mk = C(w, '127.0.0.1', 40003, '127.0.0.2', 9092, T)
    mk.x(T+6000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0,1])], 7)]), wtm_resp([(4000, [('orders', [(0,0),(1,0)])])]), cid='broker-0-txn-marker-sender')
# next transaction, same epoch (transaction version 1), left open
co.x(T+7000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
ld.x(T+8000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,1,seq=3))])]), produce_resp([('orders', [(0,0,104)])]))
if mode == 'client':
    co.x(T+9000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
    co.pk(T+90_000_000, True, co.cseq, co.sseq, ACK)
else:
    co.pk(T+2_000_000, True, co.cseq, co.sseq, ACK)
w.close()
