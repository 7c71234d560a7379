# Time: under TV1 one producer (pid 4000 epoch 0) commits K transactions in a few seconds,
# each over 1,000 partitions of topic t (AddPartitionsToTxn), each with one COMMIT marker
# written (for t 0) and the other 999 partitions' markers not seen (no Metadata: kept to
# their linger). Then an admin client sends N WriteTxnMarkers requests (~4 KB each), each an
# ABORT at epoch 0 for t 1..999 and t 5000 (a partition none of them has), answered NONE.
# usage: admin_abort_scan.py OUT K N
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
out, K, N = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
p = Pcap(out)
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
b = Client(p, 40009, 9092, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
parts = list(range(1000))
t = T + 2000
for i in range(K):
    c.x(t, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('t', parts)]), add_parts_resp([('t', parts)]), latency=10)
    c.x(t+20, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0), latency=10)
    b.x(t+40, 'wtm', 0, wtm_req([(4000, 0, True, [('t',[0])], 5)]), wtm_resp([(4000, [('t', [(0, 0)])])]), latency=10)
    t += 100
a = Client(p, 40011, 9092, t, 'adminclient-1', cip='127.0.0.9', sip='127.0.0.2')
ap = list(range(1, 1000)) + [5000]
for j in range(N):
    a.x(t, 'wtm', 0, wtm_req([(4000, 0, False, [('t', ap)], 0)]), wtm_resp([(4000, [('t', [(x, 0) for x in ap])])]), latency=10)
    t += 20
p.close()
