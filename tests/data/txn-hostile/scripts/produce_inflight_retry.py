# Two batches in flight to orders 0 (max.in.flight 5): sequence 0 (3 records) and sequence 3
# (2 records), both answered NOT_LEADER_OR_FOLLOWER, both sent again to the new leader.
# 2 batches, 5 records were written.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
p = Pcap(sys.argv[1])
meta(p, [('orders',[(0,1)])])
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9093, T, 'prod', sip='127.0.0.2')
f1 = l.conn.send(T+5000, req_frame(0, 3, 0, 'prod', produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 3, 0))])])))
f2 = l.conn.send(T+5100, req_frame(0, 3, 1, 'prod', produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 2, 3))])])))
l.conn.send(T+5200, resp_frame(0, produce_resp([('orders', [(0, 6, -1)])])), to_server=False)
l.conn.send(T+5300, resp_frame(1, produce_resp([('orders', [(0, 6, -1)])])), to_server=False)
l2 = Client(p, 40004, 9094, T, 'prod', sip='127.0.0.3')
l2.x(T+6000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 3, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
l2.x(T+6100, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 2, 3))])]), produce_resp([('orders', [(0, 0, 103)])]))
c.x(T+7000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
m = Client(p, 40003, 9094, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.3')
m.x(T+8000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
p.close()
