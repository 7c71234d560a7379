# The client's EndTxn is not in the capture (lost, or its coordinator connection not
# captured); its COMMIT markers are. The coordinator never commits on its own.
# Variant 'timeout': the markers come 70 s after the first message (timeout 60 s).
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
late = len(sys.argv) > 2 and sys.argv[2] == 'timeout'
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9093, T, 'prod')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
tm = T + (70_000_000 if late else 7000)
l.x(tm - 1000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 103)])]))
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
m.x(tm, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
p.close()
