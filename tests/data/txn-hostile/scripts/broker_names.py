"""From a hostile review: brokers named by host name in Metadata and FindCoordinator (Kubernetes, managed clusters), or
by an IPv6 address in another form than the packets' (fd00:0:0:0:0:0:0:1, FD00::1). A commit on orders 0 (leader 1,
its COMMIT marker written) and orders 2 (leader 2, no marker for 40 s: hanging); the coordinator is node 0.
mode: ip (Metadata gives 127.0.0.N) | host (kafka-N.kafka-headless.default.svc; the coordinator's address known from its
marker sender, client id broker-0-txn-marker-sender, and the leaders' from the Produce and WriteTxnMarkers partitions
they accepted) | host_client (host names, a client's host: no WriteTxnMarkers, FindCoordinator v1 for the transactional
id names node 0, whose address its accepted EndTxn gives) | v6_long, v6_upper (IPv6 over VLAN 100, brokers fd00::1-3 on
port 19092, Metadata giving fd00:0:0:0:0:0:0:N or FD00::N; orders 1 led by the coordinator, its marker written there)."""
import sys
from kp import *
from kh import W, C, T0
path, MODE = sys.argv[1], sys.argv[2]

def find_coord_req1(key, key_type=1): return s(key) + i8(key_type)
def find_coord_resp1(node, host, port): return i32(0) + i16(0) + ns(None) + i32(node) + s(host) + i32(port)

if MODE.startswith('v6'):
    w = W(path); T = T0; PORT = 19092
    ips = ['fd00::%d' % (i+1) for i in range(3)]
    form = (lambda i: 'fd00:0:0:0:0:0:0:%d' % (i+1)) if MODE == 'v6_long' else (lambda i: 'FD00::%d' % (i+1))
    B = [(i, form(i), PORT) for i in range(3)]
    cl = 'fd00::100'
    c = C(w, cl, 40001, ips[0], PORT, T, vlan=100)
    c.x(T+1000, 'find_coord', 1, find_coord_req1('tx'), find_coord_resp1(0, B[0][1], PORT))
    c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(B, [('orders', [(0,1),(1,0),(2,2)])]))
    c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
    c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0,1,2])]), add_parts_resp([('orders',[0,1,2])]))
    C(w, cl, 40002, ips[1], PORT, T, vlan=100).x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
    C(w, cl, 40004, ips[2], PORT, T, vlan=100).x(T+5500, 'produce', 3, produce_req('tx', [('orders', [(2, batch(4000, 0, 3))])]), produce_resp([('orders', [(2, 0, 100)])]))
    c.x(T+5700, 'produce', 3, produce_req('tx', [('orders', [(1, batch(4000, 0, 3))])]), produce_resp([('orders', [(1, 0, 100)])]))
    c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
    C(w, ips[0], 40003, ips[1], PORT, T, vlan=100).x(T+7000, 'wtm', 1, wtm_req_flex([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), cid='broker-0-txn-marker-sender', flexible=True)
    c.x(T+40_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(B, [('orders', [(0,1),(1,0),(2,2)])]))
    w.close()
    sys.exit(0)

p = Pcap(path)
T = 1_767_225_600_000_000
if MODE == 'ip':
    B = [(i, '127.0.0.%d' % (i+1), 9092) for i in range(3)]
else:
    B = [(i, 'kafka-%d.kafka-headless.default.svc' % i, 9092) for i in range(3)]
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 1, find_coord_req1('tx'), find_coord_resp1(0, B[0][1], 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(B, [('orders', [(0,1),(1,0),(2,2)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0,2])]), add_parts_resp([('orders',[0,2])]))
Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2').x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
Client(p, 40004, 9092, T, 'prod', sip='127.0.0.3').x(T+5500, 'produce', 3, produce_req('tx', [('orders', [(2, batch(4000, 0, 3))])]), produce_resp([('orders', [(2, 0, 100)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
if MODE != 'host_client':
    m = Client(p, 40003, 9092, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
    m.x(T+7000, 'wtm', 1, wtm_req_flex([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
c.x(T+40_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(B, [('orders', [(0,1),(1,0),(2,2)])]))
p.close()
