# The capture starts mid-session (its InitProducerId, and so the timeout, not captured). TV1:
# a transaction at epoch 3 adds orders 0 and produces; the client then hangs. 70 s later the
# coordinator aborts it on its timeout (ABORT marker at the bumped epoch 4, answered). 5 s
# after that the application is restarted: InitProducerId for tx, answered epoch 5.
# The abort came before the InitProducerId: it was not fenced by it.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
p = Pcap(sys.argv[1])
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 3, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 3, 3, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
b = Client(p, 40009, 9092, T+70_000_000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+70_000_000, 'wtm', 0, wtm_req([(4000, 4, False, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
c2 = Client(p, 40003, 9092, T+75_000_000, 'prod')
c2.x(T+75_000_000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 5))
p.close()
