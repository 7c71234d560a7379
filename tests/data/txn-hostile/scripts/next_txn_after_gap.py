# TV1: txn1 commits (EndTxn NONE, COMMIT marker written). The producer's next transaction at the
# same epoch: its AddPartitionsToTxn exchange was lost to a capture gap on the client's
# coordinator connection (capture on the coordinator's host: the client's Produce to the other
# leader is not on this wire); its EndTxn commit (same connection) is accepted and its COMMIT
# marker written. Variant 'local': txn1's partition is led by the coordinator (no marker on the
# wire), and txn2's too.  Variant 'abort2': txn2 aborts.  Variant 'nogap': the same connection,
# no gap (AddPartitions present) for reference.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kpx import *
out = sys.argv[1]; v = sys.argv[2] if len(sys.argv) > 2 else 'wire'
p = Pcap(out); T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
t = T + 1000
c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
if v != 'local':
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
if v == 'nogap':
    c.x(t + 5000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[1])]), add_parts_resp([('orders',[1])]))
else:
    lost(c, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[1])]), add_parts_resp([('orders',[1])]))
commit2 = v != 'abort2'
c.x(t + 7000, 'end_txn', 1, end_txn_req('tx', 4000, 0, commit2), end_txn_resp(0))
if v != 'local':
    m.x(t + 8000, 'wtm', 0, wtm_req([(4000, 0, commit2, [('orders',[1])], 7)]), wtm_resp([(4000, [('orders', [(1,0)])])]))
p.close()
