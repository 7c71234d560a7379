# TV1 with a Kafka 3.6+ leader (KIP-890 part 1): a transaction aborted by its client (its
# ABORT marker written), then a late Produce of that epoch (a batch the client had retried)
# reaches the leader, which checks it with the coordinator (AddPartitionsToTxn v4,
# verify_only) and is told INVALID_TXN_STATE; the leader refuses the Produce with
# INVALID_TXN_STATE. Nothing was written: one transaction, aborted; nothing open or hanging.
# The capture goes on 30 s (a consumer's Metadata exchange).
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
p = Pcap(sys.argv[1])
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp([(0,'127.0.0.1',9092),(1,'127.0.0.2',9092)], [('orders',[(0,1)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 10000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 3, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, False), end_txn_resp(0))
b = Client(p, 40009, 9092, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, False, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
# the late Produce, verified by the leader
lb = Client(p, 40020, 9092, T+8000, 'broker-1', cip='127.0.0.2', sip='127.0.0.1')
t = T + 20_000
f = l.conn.send(t, req_frame(0, 3, 7, 'prod', produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 2, 3))])])))
lb.x(t+100, 'add_parts', 4, add_parts_req4([('tx', 4000, 0, True, [('orders', [0])])]), add_parts_resp4([('tx', [('orders', [(0, 48)])])]), flexible=True)
l.conn.send(t+300, resp_frame(7, produce_resp([('orders', [(0, 48, -1)])])), to_server=False)
k = Client(p, 40005, 9092, T, 'consumer', cip='10.0.0.7')
k.x(T + 30_000_000, 'metadata', 1, metadata_req(['x']), metadata_resp([(0,'127.0.0.1',9092)], [('x', [(0,0)])]))
p.close()
