# One Metadata exchange dated a year ahead (a bad clock on one packet) first, then N TV1
# transactions of one producer, 100 ms apart, each committed by its client (EndTxn accepted;
# its partition led by the coordinator, so no marker on the wire). argv[2]=N, argv[3]=future|plain
import sys; sys.path.insert(0, 'tests/data/txn-hostile/scripts')
from kp import *
p = Pcap(sys.argv[1])
n = int(sys.argv[2]); future = sys.argv[3] == 'future'
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
if future:
    c.x(T + 365*86400_000_000, 'metadata', 1, metadata_req(['x']), metadata_resp([(0,'127.0.0.1',9092)], [('x', [(0,0)])]))
c.x(T+1000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
for i in range(n):
    t = T + 10_000 + i*100_000
    c.x(t, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
    c.x(t+1000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
    c.x(t+2000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
p.close()
