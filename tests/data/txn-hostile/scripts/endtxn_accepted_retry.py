# A client asks its EndTxn again, on a new connection, after the coordinator accepted it (its
# request timed out on the client's side): Kafka answers a retry of a completed end NONE. Variant
# 'early': the retry comes before the markers; 'late': after them (the transaction complete).
# Once each made an empty second transaction "COMMITTED by client (as EndTxn accepted; no marker
# seen)", and 'early' wrote the real one at once, its markers a third.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp import *
out = sys.argv[1]; v = sys.argv[2] if len(sys.argv) > 2 else 'early'
p = Pcap(out); T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c2 = Client(p, 40011, 9092, T, 'prod')
l = Client(p, 40002, 9093, T, 'prod', sip='127.0.0.2')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
t = T + 1000
c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
if v == 'late':
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
    c2.x(t + 5000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
else:
    c2.x(t + 3500, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
p.close()
