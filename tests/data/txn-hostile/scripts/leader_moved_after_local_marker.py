# TV1. A commit over orders 0 (led by node 0, the coordinator itself: its marker is written
# without a message on the wire) and orders 1 (led by node 1: its COMMIT marker refused for
# good, TRANSACTION_COORDINATOR_FENCED, so orders 1 hangs). 20 s later a preferred-leader
# election moves orders 0 to node 2 (a Metadata response says so). orders 0 was marked when
# it was committed; only orders 1 hangs. argv[2]=noresp: orders 1's marker response is not in
# the capture (nothing hangs: no verdict for orders 0 either).
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
mode = sys.argv[2] if len(sys.argv) > 2 else 'fenced'
from kp2 import *
p = Pcap(sys.argv[1])
BR = [(0,'127.0.0.1',9092),(1,'127.0.0.2',9092),(2,'127.0.0.3',9092)]
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(BR, [('orders',[(0,0),(1,1)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0,1])]), add_parts_resp([('orders',[0,1])]))
c.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 3, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
l = Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(1, batch_seq(4000, 0, 2, 0))])]), produce_resp([('orders', [(1, 0, 200)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
b = Client(p, 40009, 9092, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[1])], 5)]), wtm_resp([(4000, [('orders', [(1, 52)])])]) if mode == 'fenced' else None)
k = Client(p, 40005, 9092, T, 'consumer', cip='10.0.0.7')
k.x(T + 20_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(BR, [('orders', [(0,2),(1,1)])]))
k.x(T + 40_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(BR, [('orders', [(0,2),(1,1)])]))
p.close()
