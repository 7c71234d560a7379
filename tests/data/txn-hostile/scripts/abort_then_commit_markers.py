# A transaction whose EndTxn asking to abort the coordinator accepted (NONE), followed by COMMIT
# markers for its partition at its producer id and epoch: Kafka's coordinator never commits a
# transaction it accepted to abort (a coordinator that lost its state, another cluster's
# producer of the same id and epoch, or damaged bytes). From a hostile review: once written
# "COMMITTED, though the client asked to abort" with no verdict.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp import *
out = sys.argv[1]
p = Pcap(out); T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
l = Client(p, 40002, 9093, T, 'prod', sip='127.0.0.2')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
t = T + 1000
c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, False), end_txn_resp(0))
m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
p.close()
