# From a hostile review (2026-12-07): the admin client given client.id=ops-tool (kafka-transactions.sh --command-config).
# Client host (10.0.0.1): producer tx (pid 4000, coord node 0, orders 0 led by node 1) commits 3
# transactions 20 s apart, the last one idle till the capture ends (no consumer). At 30 s an
# operator on the same host runs `kafka-transactions.sh abort` for ANOTHER producer (pid 5000,
# payments 0, led by node 2): the admin client's WriteTxnMarkers ABORT goes to node 2 from this host.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
out = sys.argv[1]
p = Pcap(out)
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp([(0,'127.0.0.1',9092),(1,'127.0.0.2',9092),(2,'127.0.0.3',9092)], [('orders',[(0,1)]),('payments',[(0,2)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
l = Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2')
seq = 0
for i in range(3):
    t = T + 10_000 + int(i * 20 * 1_000_000)
    c.x(t, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
    l.x(t+1000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 3, seq))])]), produce_resp([('orders', [(0, 0, 100 + 4*i)])]))
    seq += 3
    c.x(t+2000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
# admin abort of pid 5000 on payments 0 (kafka-transactions.sh abort --topic payments --partition 0 --start-offset 7)
a = Client(p, 40011, 9092, T + 55_000_000, 'ops-tool', sip='127.0.0.3')
a.x(T+55_000_000, 'wtm', 0, wtm_req([(5000, 3, False, [('payments',[0])], 0)]), wtm_resp([(5000, [('payments', [(0, 0)])])]))
c.conn.p.pkt(T + 70_000_000, '10.0.0.1', 40001, '127.0.0.1', 9092, c.conn.cseq, c.conn.sseq, ACK)
p.close()
