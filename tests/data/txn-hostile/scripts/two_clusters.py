# Two independent Kafka clusters in one capture (tcpdump -i any on a host running both, or a merge).
# Each cluster's ProducerIdManager hands out the same first producer id (1000, epoch 0) to its own
# transactional id; their transactions overlap in time. Variant 'init': cluster B's app starts
# (InitProducerId) while cluster A's transaction is open.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp import *
out = sys.argv[1]; v = sys.argv[2] if len(sys.argv) > 2 else 'overlap'
p = Pcap(out); T = 1_767_225_600_000_000
A = dict(coord='127.0.0.1', leader='127.0.0.2', cli='10.0.0.1', tid='app-A', topic='orders')
Bc = dict(coord='10.1.0.1', leader='10.1.0.2', cli='10.0.0.9', tid='app-B', topic='payments')
def parts(k, port):
    c = Client(p, port, 9092, T, k['tid'] + '-client', cip=k['cli'], sip=k['coord'])
    l = Client(p, port + 1, 9092, T, k['tid'] + '-client', cip=k['cli'], sip=k['leader'])
    m = Client(p, port + 2, 9092, T, 'broker-0-txn-marker-sender', cip=k['coord'], sip=k['leader'])
    return c, l, m
ca, la, ma = parts(A, 40001)
cb, lb, mb = parts(Bc, 50001)
t = T + 1000
ca.x(t, 'init_pid', 1, init_pid_req('app-A'), init_pid_resp(1000, 0))
if v == 'overlap':
    cb.x(t + 100, 'init_pid', 1, init_pid_req('app-B'), init_pid_resp(1000, 0))
ca.x(t + 1000, 'add_parts', 1, add_parts_req('app-A', 1000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
if v == 'init':
    cb.x(t + 1500, 'init_pid', 1, init_pid_req('app-B'), init_pid_resp(1000, 0))
cb.x(t + 2000, 'add_parts', 1, add_parts_req('app-B', 1000, 0, [('payments',[3])]), add_parts_resp([('payments',[3])]))
la.x(t + 3000, 'produce', 3, produce_req('app-A', [('orders', [(0, batch(1000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
lb.x(t + 3500, 'produce', 3, produce_req('app-B', [('payments', [(3, batch(1000, 0, 5))])]), produce_resp([('payments', [(3, 0, 500)])]))
ca.x(t + 4000, 'end_txn', 1, end_txn_req('app-A', 1000, 0, True), end_txn_resp(0))
cb.x(t + 4500, 'end_txn', 1, end_txn_req('app-B', 1000, 0, False), end_txn_resp(0))
ma.x(t + 5000, 'wtm', 0, wtm_req([(1000, 0, True, [('orders',[0])], 1)]), wtm_resp([(1000, [('orders', [(0,0)])])]))
mb.x(t + 5500, 'wtm', 0, wtm_req([(1000, 0, False, [('payments',[3])], 1)]), wtm_resp([(1000, [('payments', [(3,0)])])]))
p.close()
