# A Produce batch answered NOT_LEADER_OR_FOLLOWER (6) is retried (the same batch, same
# sequence) to the new leader: one batch, 3 records written. Then, after the commit, a zombie
# Produce of the same epoch arrives late and is rejected (INVALID_TXN_STATE = 48).
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9093, T, 'prod')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 6, -1)])]))
l2 = Client(p, 40004, 9094, T, 'prod')
l2.x(T+5500, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
m = Client(p, 40003, 9094, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
m.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
l.x(T+9000, 'produce', 3, produce_req('tx', [('orders', [(1, batch(4000, 0, 2))])]), produce_resp([('orders', [(1, 48, -1)])]))
p.close()
