# TV1 coordinator failover within one transaction: broker-0 (coordinator epoch 7) accepted the
# commit and wrote orders 0's COMMIT; broker-1 (epoch 8) takes over and re-sends COMMIT for
# orders 0 and 1 (written); the deposed broker-0 then retries orders 1 at 7 (refused, FENCED).
# Variant 'after': the deposed retry comes after the transaction was written out (a next
# message of the producer accepted).
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kpx import *
out = sys.argv[1]; v = sys.argv[2] if len(sys.argv) > 2 else 'during'
p = Pcap(out); T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
l = Client(p, 40002, 9093, T, 'prod', sip='127.0.0.2')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
n = Client(p, 40004, 9093, T, 'broker-1-txn-marker-sender', cip='127.0.0.3', sip='127.0.0.2')
m2 = Client(p, 40006, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
t = T + 1000
P = [('orders', [0, 1])]
c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, P), add_parts_resp(P))
l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3)), (1, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100), (1, 0, 100)])]))
c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
n.x(t + 5000, 'wtm', 0, wtm_req([(4000, 0, True, P, 8)]), wtm_resp([(4000, [('orders', [(0,0),(1,0)])])]))
if v == 'after':
    c.x(t + 5500, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[5])]), add_parts_resp([('orders',[5])]))
m2.x(t + 6000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[1])], 7)]), wtm_resp([(4000, [('orders', [(1,52)])])]))
p.close()
