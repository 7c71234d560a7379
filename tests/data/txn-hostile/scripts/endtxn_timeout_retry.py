# TV1: EndTxn(commit) sent, its response never comes (request.timeout.ms); the coordinator
# wrote the COMMIT markers right away; the client disconnects and sends EndTxn again on a new
# connection 30 s later; the coordinator (CompleteCommit) answers NONE. One transaction.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp import *
mode = sys.argv[2] if len(sys.argv) > 2 else 'late'
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
md = Client(p, 40000, 9092, T, 'prod')
md.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp([(0,'127.0.0.1',9092),(1,'127.0.0.2',9093)], [('orders',[(0,1)])]))
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
c.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3, base_offset=0))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), None)
b = Client(p, 40009, 9093, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
t2 = T + (30_006_000 if mode == 'late' else 2_006_000)
c2 = Client(p, 40002, 9092, t2, 'prod')
c2.corr = 5
c2.x(t2+100, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
p.close()
