# A client retries EndTxn after a retriable error (COORDINATOR_LOAD_IN_PROGRESS = 14,
# or CONCURRENT_TRANSACTIONS = 51): one transaction, committed.
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
err = int(sys.argv[2]) if len(sys.argv) > 2 else 14
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp([(0,'127.0.0.1',9092),(1,'127.0.0.1',9093)], [('orders', [(0,1)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9093, T, 'prod')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(err))
c.x(T+106000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
m.x(T+107000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
p.close()
