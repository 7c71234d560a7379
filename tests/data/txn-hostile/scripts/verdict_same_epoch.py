"""Transaction version 1: one producer id+epoch (5000/0) serves two transactions in turn:
 1st: aborted by its client, clean (ABORT marker written), at ~1 s
 2nd: committed, its COMMIT marker refused TRANSACTION_COORDINATOR_FENCED (marker_failed verdict at ~6 s),
      then nothing more; the capture ends at 30 s (the 2nd is hanging).
Filters that leave out the 1st (--outcome committed, --result commit, --errors, --since +5s) should keep the 2nd's verdicts."""
import sys
from kh import *
w = W(sys.argv[1]); T = T0
cb = C(w, '10.0.0.5', 40011, '127.0.0.1', 9092, T)
lb = C(w, '10.0.0.5', 40012, '127.0.0.2', 9092, T)
mk = C(w, '127.0.0.1', 40003, '127.0.0.2', 9092, T)
MS = 'broker-0-txn-marker-sender'
cb.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0,1),(1,1)])]))
cb.x(T+2000, 'init_pid', 1, init_pid_req('tx-b'), init_pid_resp(5000, 0))
def txn(t, commit, err, off):
    cb.x(t, 'add_parts', 1, add_parts_req('tx-b', 5000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
    lb.x(t+100, 'produce', 3, produce_req('tx-b', [('orders', [(0, batch_seq(5000,0,2,seq=off))])]), produce_resp([('orders', [(0,0,100+off)])]))
    cb.x(t+200, 'end_txn', 1, end_txn_req('tx-b', 5000, 0, commit), end_txn_resp(0))
    mk.x(t+300, 'wtm', 0, wtm_req([(5000, 0, commit, [('orders',[0])], 7)]), wtm_resp([(5000, [('orders', [(0,err)])])]), cid=MS)
txn(T+1_000_000, False, 0, 0)
txn(T+6_000_000, True, 52, 2)
cb.pk(T+30_000_000, True, cb.cseq, cb.sseq, ACK)
w.close()
