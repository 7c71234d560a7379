"""From a hostile review: all brokers behind one load balancer address (SNI routing, as Confluent Cloud,
Strimzi ingress/route): Metadata names kafka-N.example.com:9092, and every connection goes to
10.9.9.9:9092. tx-a's coordinator is node 0, tx-b's is node 2 (FindCoordinator v1 says so).
tx-b commits orders 0 (led by node 0) and orders 2 (led by node 2, its own coordinator: local marker).
Client-side capture: no WriteTxnMarkers."""
import sys
from kh import *
w = W(sys.argv[1]); T = T0
LB = '10.9.9.9'
B = [(i, 'kafka-%d.example.com' % i, 9092) for i in range(3)]
def fc_req(key, kt=1): return s(key) + i8(kt)
def fc_resp(node, host, port): return i32(0) + i16(0) + ns(None) + i32(node) + s(host) + i32(port)
a = C(w, '10.0.0.9', 40001, LB, 9092, T)
b = C(w, '10.0.0.9', 40002, LB, 9092, T)
a.x(T+1000, 'find_coord', 1, fc_req('tx-a'), fc_resp(0, B[0][1], 9092))
a.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(B, [('orders', [(0,0),(1,1),(2,2)])]))
a.x(T+3000, 'init_pid', 1, init_pid_req('tx-a'), init_pid_resp(1000, 0))
b.x(T+4000, 'find_coord', 1, fc_req('tx-b'), fc_resp(2, B[2][1], 9092))
b.x(T+5000, 'init_pid', 1, init_pid_req('tx-b'), init_pid_resp(2000, 0))
b.x(T+6000, 'add_parts', 1, add_parts_req('tx-b', 2000, 0, [('orders',[0,2])]), add_parts_resp([('orders',[0,2])]))
p0 = C(w, '10.0.0.9', 40003, LB, 9092, T)
p0.x(T+7000, 'produce', 3, produce_req('tx-b', [('orders', [(0, batch(2000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
p2 = C(w, '10.0.0.9', 40004, LB, 9092, T)
p2.x(T+7500, 'produce', 3, produce_req('tx-b', [('orders', [(2, batch(2000, 0, 3))])]), produce_resp([('orders', [(2, 0, 300)])]))
b.x(T+8000, 'end_txn', 1, end_txn_req('tx-b', 2000, 0, True), end_txn_resp(0))
a.x(T+40_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(B, [('orders', [(0,0),(1,1),(2,2)])]))
w.close()
