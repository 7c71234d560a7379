# One Metadata exchange (a consumer's, on another connection) dated a year ahead, read
# between a commit's EndTxn and its COMMIT markers 1 ms later (a bad timestamp on one packet:
# bad_timestamp, or a merged capture). The transaction is one: EndTxn, then markers.
# argv[2] = future | plain
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
p = Pcap(sys.argv[1])
future = sys.argv[2] == 'future'
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 3, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
k = Client(p, 40005, 9092, T, 'consumer', cip='10.0.0.7')
k.x(T + (365*86400_000_000 if future else 6500), 'metadata', 1, metadata_req(['x']), metadata_resp([(0,'127.0.0.1',9092)], [('x', [(0,0)])]), latency=0)
b = Client(p, 40009, 9092, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
p.close()
