# consume-transform-produce: data on orders-0 (leader node 1), offsets of group g whose
# coordinator is node 2 (__consumer_offsets-7). The coordinator (node 0) sends the data
# marker to node 1 and the offsets marker to node 2 in separate WriteTxnMarkers requests.
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp([(0,'127.0.0.1',9092),(1,'127.0.0.1',9093),(2,'127.0.0.1',9094)], [('orders', [(0,1)]), ('__consumer_offsets', [(7,2)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9093, T, 'prod')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+5500, 'add_offsets', 0, add_offsets_req('tx', 4000, 0, 'g'), add_offsets_resp(0))
g = Client(p, 40005, 9094, T, 'prod')
g.x(T+5700, 'txn_offset_commit', 0, txn_offset_commit_req('tx', 'g', 4000, 0, [('in', [(0, 42)])]), txn_offset_commit_resp([('in', [(0,)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
m.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
m2 = Client(p, 40004, 9094, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
m2.x(T+7300, 'wtm', 0, wtm_req([(4000, 0, True, [('__consumer_offsets',[7])], 7)]), wtm_resp([(4000, [('__consumer_offsets', [(7,0)])])]))
p.close()
