# KIP-360: the producer itself (same client, same connection) hits a Produce timeout, aborts,
# and bumps its own epoch with InitProducerId v3 naming its current producer id and epoch.
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod-1')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+3000, 'init_pid', 3, init_pid_req3('tx', 60000, -1, -1), init_pid_resp3(4000, 0), flexible=True)
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9093, T, 'prod-1')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 7, -1)])]))  # REQUEST_TIMED_OUT
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
m.x(T+8000, 'wtm', 0, wtm_req([(4000, 1, False, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
c.x(T+9000, 'init_pid', 3, init_pid_req3('tx', 60000, 4000, 0), init_pid_resp3(4000, 1), flexible=True)
p.close()
