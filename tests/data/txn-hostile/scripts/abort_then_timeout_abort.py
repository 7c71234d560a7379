# TV1: txn1 aborted by its client (EndTxn abort accepted; its partition orders 0 is led by the
# coordinator, so its ABORT marker is written locally, no WriteTxnMarkers on the wire). txn2 on the
# same epoch begins 1 s later on orders 1, times out (timeout 2 s); the coordinator aborts it with
# ABORT markers at the bumped epoch 1 for orders 1, 4 s in. (commit_then_timeout_abort.py with
# abort instead of commit.)
import sys; sys.path.insert(0, 'tests/data/txn-hostile/scripts')
from kp import *
p = Pcap(sys.argv[1])
commit = len(sys.argv) > 2 and sys.argv[2] == 'commit'
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 2000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
c.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, commit), end_txn_resp(0))
c.x(T+1_000_000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[1])]), add_parts_resp([('orders',[1])]))
c.x(T+1_001_000, 'produce', 3, produce_req('tx', [('orders', [(1, batch(4000, 0, 2, base_offset=0))])]), produce_resp([('orders', [(1, 0, 200)])]))
b = Client(p, 40009, 9093, T+4_000_000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+4_000_000, 'wtm', 0, wtm_req([(4000, 1, False, [('orders',[1])], 5)]), wtm_resp([(4000, [('orders', [(1, 0)])])]))
if len(sys.argv) > 3:
    c.x(T+int(float(sys.argv[3])*1_000_000), 'metadata', 1, metadata_req(['other']), metadata_resp([(0,"127.0.0.1",9092)], [('other', [(0,0)])]))
p.close()
