# Transactional id 'tx' on two producer ids: an old instance (pid 4000) keeps an open
# transaction and a new instance (pid 5000, e.g. after the old id expired) inits and commits;
# then the old instance's EndTxn comes (rejected INVALID_PRODUCER_ID_MAPPING = 49).
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
a = Client(p, 40001, 9092, T, 'old')
b = Client(p, 40002, 9092, T, 'new')
a.x(T+1000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 3))
a.x(T+2000, 'add_parts', 1, add_parts_req('tx', 4000, 3, [('orders',[0])]), add_parts_resp([('orders',[0])]))
b.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(5000, 0))
b.x(T+4000, 'add_parts', 1, add_parts_req('tx', 5000, 0, [('orders',[1])]), add_parts_resp([('orders',[1])]))
a.x(T+4500, 'add_parts', 1, add_parts_req('tx', 4000, 3, [('orders',[2])]), add_parts_resp([('orders',[2])], 49))
b.x(T+5000, 'end_txn', 1, end_txn_req('tx', 5000, 0, True), end_txn_resp(0))
a.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 3, True), end_txn_resp(49))
p.close()
