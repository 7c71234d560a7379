# Capture on a host that runs a producer app (10.0.0.1) and broker 0 (127.0.0.1): tcpdump -i any on
# a Kubernetes node, say. tx-a's coordinator is node 0 (this host): its WriteTxnMarkers to node 1
# are on the wire, written. tx-b's coordinator is node 2 (another host): its markers to node 1 go
# between two other hosts. tx-b commits once at 2 s, EndTxn accepted; capture ends at 40 s.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
out = sys.argv[1]
p = Pcap(out)
B = [(0,'127.0.0.1',9092),(1,'127.0.0.2',9092),(2,'127.0.0.3',9092)]
m = Client(p, 40000, 9092, T, 'prod')
m.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(B, [('orders',[(0,1)]),('audit',[(0,1)])]))
a = Client(p, 40001, 9092, T, 'prod-a')           # to coordinator node 0
a.x(T+2000, 'find_coord', 0, find_coord_req('tx-a'), find_coord_resp(0, '127.0.0.1', 9092))
a.x(T+3000, 'init_pid', 1, init_pid_req('tx-a', 60000), init_pid_resp(4000, 0))
bcl = Client(p, 40003, 9092, T, 'prod-b', sip='127.0.0.3')   # to coordinator node 2
bcl.x(T+2000, 'find_coord', 0, find_coord_req('tx-b'), find_coord_resp(2, '127.0.0.3', 9092))
bcl.x(T+3000, 'init_pid', 1, init_pid_req('tx-b', 60000), init_pid_resp(5000, 0))
la = Client(p, 40002, 9092, T, 'prod-a', sip='127.0.0.2')
lb = Client(p, 40004, 9092, T, 'prod-b', sip='127.0.0.2')
ms = Client(p, 40009, 9092, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
t = T + 1_000_000
a.x(t, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('audit',[0])]), add_parts_resp([('audit',[0])]))
la.x(t+1000, 'produce', 3, produce_req('tx-a', [('audit', [(0, batch_seq(4000, 0, 1, 0))])]), produce_resp([('audit', [(0, 0, 10)])]))
a.x(t+2000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
ms.x(t+3000, 'wtm', 0, wtm_req([(4000, 0, True, [('audit',[0])], 5)]), wtm_resp([(4000, [('audit', [(0, 0)])])]))
t = T + 2_000_000
bcl.x(t, 'add_parts', 1, add_parts_req('tx-b', 5000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
lb.x(t+1000, 'produce', 3, produce_req('tx-b', [('orders', [(0, batch_seq(5000, 0, 3, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
bcl.x(t+2000, 'end_txn', 1, end_txn_req('tx-b', 5000, 0, True), end_txn_resp(0))
p.pkt(T + 40_000_000, '10.0.0.1', 40000, '127.0.0.1', 9092, m.conn.cseq, m.conn.sseq, ACK)
p.close()
