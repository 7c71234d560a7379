# From a hostile review (2026-12-07): Two transactions written out with no marker seen for orders 1 (its leader's marker traffic not
# captured, no Metadata): tx-a (pid 4000) first batch at 200, tx-b (pid 5000, or 4000 epoch 0 again
# with 'same') first batch at 300. A read_committed consumer sees the LSO move past 200 (tx-a's
# marker was written where the capture did not see it), then stay at 300 for 90 s while hw moves.
# usage: unsettled_shadow.py OUT [two|same|reverse]
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp import *
out, v = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else 'two')
p = Pcap(out); T = 1_767_225_600_000_000
def txn(t0, port, tid, pid, off1, cport_leader):
    c = Client(p, port, 9092, t0, 'prod-' + tid)
    c.x(t0+2000, 'find_coord', 0, find_coord_req(tid), find_coord_resp(0, '127.0.0.1', 9092))
    c.x(t0+3000, 'init_pid', 1, init_pid_req(tid, 60000), init_pid_resp(pid, 0))
    c.x(t0+4000, 'add_parts', 1, add_parts_req(tid, pid, 0, [('orders',[0, 1])]), add_parts_resp([('orders',[0, 1])]))
    l = Client(p, cport_leader, 9093, t0+4500, 'prod-' + tid, sip='127.0.0.2')
    l.x(t0+5000, 'produce', 3, produce_req(tid, [('orders', [(0, batch(pid, 0, 3)), (1, batch(pid, 0, 2))])]), produce_resp([('orders', [(0, 0, off1 - 100), (1, 0, off1)])]))
    c.x(t0+6000, 'end_txn', 1, end_txn_req(tid, pid, 0, True), end_txn_resp(0))
    b = Client(p, port + 1000, 9093, t0+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
    b.x(t0+7000, 'wtm', 0, wtm_req([(pid, 0, True, [('orders',[0])], 5)]), wtm_resp([(pid, [('orders', [(0, 0)])])]))
f = Client(p, 40030, 9093, T+1000, 'consumer-1', cip='10.0.0.5', sip='127.0.0.2')
first, second = (300, 200) if v == 'reverse' else (200, 300)
txn(T, 40001, 'tx-a', 4000, first, 40002)
# consumer sees the first transaction's offset settle
f.x(T + 2_000_000, 'fetch', 4, fetch_req([('orders', [1])]), fetch_resp([('orders', [(1, first + 10, first + 5)])]))
txn(T + 3_000_000, 40011, 'tx-b' if v != 'same' else 'tx-a', 5000 if v != 'same' else 4000, second, 40012)
for i in range(10):
    t = T + 4_000_000 + i * 10_000_000
    f.x(t, 'fetch', 4, fetch_req([('orders', [1])]), fetch_resp([('orders', [(1, max(first, second) + 10 + 5*i, second)])]))
p.close()
