"""An EndTxn asking to commit, accepted, with no AddPartitionsToTxn or Produce captured before
it, then the COMMIT markers of its producer id and epoch. mode:
 mid  - the capture begins in the transaction (its partitions were added before it)
 init - its producer's InitProducerId is captured, the adds are not (lost)
Once written as two transactions: the end at once ("0 partitions"), the markers a second,
"markers only" one."""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
mk = C(w, '127.0.0.1', 40003, '127.0.0.2', 9092, T)
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0,1),(1,1)])]))
if mode == 'init':
    co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a'), init_pid_resp(4000, 0))
co.x(T+5000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
mk.x(T+6000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]), cid='broker-0-txn-marker-sender')
w.close()
